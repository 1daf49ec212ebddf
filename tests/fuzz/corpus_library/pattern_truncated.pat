pattern p {
  %a = aten.add(
