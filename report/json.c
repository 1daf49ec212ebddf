/*
 * json.c: what every JSON report shares: the diagnostics array and writing
 * (then freeing) a cJSON tree. Used by the scan, discover and match reports.
 */
#include "report_int.h"
#include "fusescan/escape.h"

#include <stdlib.h>

cJSON *fs_json_diagnostics(const struct fs_diags *d)
{
	static const char *const sev[] = {"note", "warning", "error"};
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < d->n; i++) {
		const struct fs_diag *g = &d->v[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "file", g->file);
		cJSON_AddNumberToObject(o, "line", g->line);
		cJSON_AddNumberToObject(o, "col", g->col);
		cJSON_AddStringToObject(o, "severity", sev[g->severity]);
		cJSON_AddStringToObject(o, "message", g->message);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

int fs_json_write(cJSON *root, FILE *out)
{
	char *text = fs_json_print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	fputs(text, out);
	fputc('\n', out);
	free(text);
	return ferror(out) ? -1 : 0;
}
