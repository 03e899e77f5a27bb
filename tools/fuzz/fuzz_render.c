// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the one rule by which approvers show a request
 * (queue/render.c: watch, bpfsbx approve, the dashboard). Oracle: what is
 * shown holds no byte a terminal acts on but the marked line break, is
 * UTF-8, and is a fixed point: rendering it again escapes nothing, finds
 * exactly the line breaks the first pass marked and changes nothing but
 * marking them again. Its rows, at any width, cover it in order.
 *
 *   make fuzz && build/fuzz/fuzz_render tools/fuzz/corpus/fuzz_render
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "queue/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int oneline = 0; oneline < 2; oneline++) {
		struct sbx_strbuf a = { 0 }, b = { 0 };
		struct sbx_render_counts c1 = { 0 }, c2 = { 0 };
		struct sbx_render_row *rows;
		size_t n, at = 0, cols = size ? data[0] % 40 : 0;
		const char *s;

		sbx_render_text(&a, (const char *)data, size, oneline, &c1);
		s = a.p ? a.p : "";
		for (size_t i = 0; i < a.len; i++) {
			unsigned char ch = (unsigned char)s[i];

			if ((ch < 0x20 && !(ch == '\n' && !oneline)) || ch == 0x7f)
				abort();
		}
		sbx_render_text(&b, s, a.len, oneline, &c2);
		if (c2.ctrl || c2.bidi || c2.invisible || c2.invalid || c2.space_runs ||
		    c2.newlines != (oneline ? 0 : c1.newlines))
			abort();
		/* the same text, but each marked break marked again */
		{
			struct sbx_strbuf want = { 0 };

			for (size_t i = 0; i < a.len; i++) {
				if (s[i] == '\n')
					sbx_sb_puts(&want, SBX_RENDER_NL);
				sbx_sb_putc(&want, s[i]);
			}
			if (strcmp(b.p ? b.p : "", want.p ? want.p : ""))
				abort();
			free(want.p);
		}
		n = sbx_render_wrap(s, cols, &rows);
		for (size_t i = 0; i < n; i++) {
			/* in order, nothing left out but the line breaks between rows */
			if (rows[i].off != at && !(s[at] == '\n' && rows[i].off == at + 1 && !rows[i].cont))
				abort();
			at = rows[i].off + rows[i].len;
		}
		if (at != a.len)
			abort();
		free(rows);
		free(a.p);
		free(b.p);
	}
	return 0;
}
