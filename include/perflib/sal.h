/* SPDX-License-Identifier: MIT */
/*
 * perflib/sal.h - Microsoft's source annotations (SAL) as empty macros, so that Windows
 * counter code keeps its annotations. Opt-in: <perflib.h> defines none of them; include this
 * header (or <perflib/win32compat.h>, which includes it) to get them.
 *
 * Every name below is one that neither glibc, libstdc++ nor the Linux UAPI headers use as an
 * identifier (checked against glibc 2.36, libstdc++ 12 and Linux 6.1 headers), so this header
 * may come before or after any of them. Two legacy names are the exception: glibc
 * (<netinet/in.h>, <arpa/inet.h>) and libstdc++ (<string>, <utility>, <istream>, <thread>, ...)
 * name parameters __in and __out, so an empty __in or __out macro breaks every one of those
 * headers included after it. They are defined only when the includer asks, with
 * PERFLIB_SAL_IN_OUT defined before this header, which must then come after every system
 * header of the translation unit. Annotations taking arguments are function-like macros: a
 * parameter that happens to share their name (libstdc++'s "__success") is not followed by a
 * "(" and is left alone.
 *
 * Each macro is defined only if not already defined, so a project's own SAL shim wins.
 */
#ifndef PERFLIB_SAL_H
#define PERFLIB_SAL_H

/* ---- legacy (Windows Vista SDK, CTRPP output) ----------------------------------------- */
#if defined(PERFLIB_SAL_IN_OUT) && !defined(__in)
#define __in
#endif
#if defined(PERFLIB_SAL_IN_OUT) && !defined(__out)
#define __out
#endif
#ifndef __in_opt
#define __in_opt
#endif
#ifndef __out_opt
#define __out_opt
#endif
#ifndef __inout
#define __inout
#endif
#ifndef __inout_opt
#define __inout_opt
#endif
#ifndef __in_bcount
#define __in_bcount(size)
#endif
#ifndef __in_bcount_opt
#define __in_bcount_opt(size)
#endif
#ifndef __in_ecount
#define __in_ecount(size)
#endif
#ifndef __in_ecount_opt
#define __in_ecount_opt(size)
#endif
#ifndef __out_bcount
#define __out_bcount(size)
#endif
#ifndef __out_bcount_opt
#define __out_bcount_opt(size)
#endif
#ifndef __out_ecount
#define __out_ecount(size)
#endif
#ifndef __out_ecount_opt
#define __out_ecount_opt(size)
#endif
#ifndef __out_bcount_part
#define __out_bcount_part(size, length)
#endif
#ifndef __out_ecount_part
#define __out_ecount_part(size, length)
#endif
#ifndef __inout_bcount
#define __inout_bcount(size)
#endif
#ifndef __inout_bcount_opt
#define __inout_bcount_opt(size)
#endif
#ifndef __inout_ecount
#define __inout_ecount(size)
#endif
#ifndef __inout_ecount_opt
#define __inout_ecount_opt(size)
#endif
#ifndef __deref_out
#define __deref_out
#endif
#ifndef __deref_out_opt
#define __deref_out_opt
#endif
#ifndef __checkReturn
#define __checkReturn
#endif
#ifndef __success
#define __success(expr)
#endif
#ifndef __nullterminated
#define __nullterminated
#endif
#ifndef __format_string
#define __format_string
#endif

/* ---- SAL 2 (Windows 8+ SDK) ------------------------------------------------------------ */
#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _In_z_
#define _In_z_
#endif
#ifndef _In_opt_z_
#define _In_opt_z_
#endif
#ifndef _In_reads_
#define _In_reads_(size)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(size)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(size)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(size)
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Out_writes_
#define _Out_writes_(size)
#endif
#ifndef _Out_writes_opt_
#define _Out_writes_opt_(size)
#endif
#ifndef _Out_writes_z_
#define _Out_writes_z_(size)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(size)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(size)
#endif
#ifndef _Out_writes_to_
#define _Out_writes_to_(size, count)
#endif
#ifndef _Out_writes_bytes_to_
#define _Out_writes_bytes_to_(size, count)
#endif
#ifndef _Out_writes_bytes_to_opt_
#define _Out_writes_bytes_to_opt_(size, count)
#endif
#ifndef _Out_cap_post_count_
#define _Out_cap_post_count_(cap, count)
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _Inout_updates_
#define _Inout_updates_(size)
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(size)
#endif
#ifndef _Outptr_
#define _Outptr_
#endif
#ifndef _Outptr_opt_
#define _Outptr_opt_
#endif
#ifndef _Outptr_result_maybenull_
#define _Outptr_result_maybenull_
#endif
#ifndef _Success_
#define _Success_(expr)
#endif
#ifndef _Check_return_
#define _Check_return_
#endif
#ifndef _Must_inspect_result_
#define _Must_inspect_result_
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif
#ifndef _Ret_notnull_
#define _Ret_notnull_
#endif
#ifndef _Pre_maybenull_
#define _Pre_maybenull_
#endif
#ifndef _Pre_notnull_
#define _Pre_notnull_
#endif
#ifndef _Post_invalid_
#define _Post_invalid_
#endif
#ifndef _Post_writable_byte_size_
#define _Post_writable_byte_size_(size)
#endif
#ifndef _Frees_ptr_
#define _Frees_ptr_
#endif
#ifndef _Frees_ptr_opt_
#define _Frees_ptr_opt_
#endif
#ifndef _Field_size_
#define _Field_size_(size)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(size)
#endif
#ifndef _Printf_format_string_
#define _Printf_format_string_
#endif
#ifndef _Reserved_
#define _Reserved_
#endif
#ifndef _Use_decl_annotations_
#define _Use_decl_annotations_
#endif

#endif /* PERFLIB_SAL_H */
