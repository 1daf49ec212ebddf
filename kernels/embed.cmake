# Turns kernels/catalog.txt into a C array (fs_builtin_catalog) at build time.
# usage: cmake -DIN=catalog.txt -DOUT=catalog_data.c -P embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from kernels/catalog.txt by kernels/embed.cmake */\n#include <stddef.h>\n"
  "extern const char fs_builtin_catalog[];\nextern const size_t fs_builtin_catalog_len;\n"
  "const char fs_builtin_catalog[] = {${bytes} 0};\nconst size_t fs_builtin_catalog_len = ${len};\n")
