/* SPDX-License-Identifier: MIT */
/*
 * logtext.h - typeperf's sample log: the PDH CSV/TSV text of tools.md 4.3. Every field is
 * wrapped in double quotes (a '"' inside is doubled), fields are separated by ',' (CSV)
 * or TAB (TSV), and every line ends with CRLF.
 *
 *	"(PDH-CSV 4.0)","\\HOST\Object(Instance)\Counter",...
 *	"MM/DD/YYYY HH:MM:SS.mmm","12.000000"," ",...
 *
 * Values have exactly six decimals (printf "%f"); a missing value is " ".
 */
#ifndef PDH_LOGTEXT_H
#define PDH_LOGTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pdh_text_format {
	PDH_TEXT_CSV,
	PDH_TEXT_TSV,
};

/* pdh_text_field - write @s quoted ('"' doubled), without separator */
void pdh_text_field(FILE *out, const char *s);

/*
 * pdh_text_header - the header line: "(PDH-CSV 4.0)" or "(PDH-TSV 4.0)", then @paths.
 * Returns 0 or -EIO.
 */
int pdh_text_header(FILE *out, enum pdh_text_format fmt, char *const *paths, size_t nr);

/*
 * pdh_text_row - one sample: its time @stamp (a local FILETIME, written by
 * perflib_stamp_format: "MM/DD/YYYY HH:MM:SS.mmm"), then for each column @values[i] when
 * @valid[i], else " ". Returns 0 or -EIO.
 */
int pdh_text_row(FILE *out, enum pdh_text_format fmt, int64_t stamp, const double *values,
		 const bool *valid, size_t nr);

/* pdh_text_value - @v with six decimals into @buf (at least 32 bytes for usual values) */
void pdh_text_value(char *buf, size_t size, double v);

#endif /* PDH_LOGTEXT_H */
