// SPDX-License-Identifier: MIT
/*
 * raw_consumer.cpp - a C++ consumer in the shape of Microsoft's documentation sample for the
 * PerfLib V2 consumer functions: a small query class with SAL-annotated buffer helpers
 * (_Success_, _Check_return_, _Ret_maybenull_, _Post_writable_byte_size_, _Pre_maybenull_,
 * _Post_invalid_, _Out_cap_post_count_), PERF_COUNTER_IDENTIFIER blocks built by hand,
 * PerfQueryCounterData's output walked with LPCBYTE arithmetic. Built without -fshort-wchar
 * (WCHAR is char16_t: u"" literals). Only the includes differ from Windows.
 *
 * usage: raw_consumer COUNTERSET-GUID ID... - one specification per counter id, every
 * instance ("*"); prints one line per value, "<instance> <id> <value>" ("-" for the instance
 * of a single-instance set), or "<id> error <status>". Exit 0, or 1 on an API failure.
 */
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#include <perflib/win32compat.h>
#include <perflib/perflib-linux.h>

_Ret_maybenull_ _Post_writable_byte_size_(cb) static void *AllocateBytes(size_t cb)
{
	return malloc(cb);
}

static void FreeBytes(_Pre_maybenull_ _Post_invalid_ void *p)
{
	free(p);
}

class CounterQuery
{
      public:
	CounterQuery() : query_(NULL), data_(NULL), cb_(0)
	{
	}
	~CounterQuery()
	{
		FreeBytes(data_);
		if (query_)
			PerfCloseQueryHandle(query_);
	}

	_Success_(return == ERROR_SUCCESS) _Check_return_ ULONG Open()
	{
		return PerfOpenQueryHandle(NULL, &query_);
	}

	/* one specification: every instance of @set, counter @id */
	_Success_(return == ERROR_SUCCESS) _Check_return_ ULONG Add(_In_ const GUID &set, ULONG id)
	{
		const WCHAR star[] = u"*";
		std::vector<BYTE> block(sizeof(PERF_COUNTER_IDENTIFIER) + 8, 0);
		PERF_COUNTER_IDENTIFIER *ci =
			reinterpret_cast<PERF_COUNTER_IDENTIFIER *>(&block[0]);

		ci->CounterSetGuid = set;
		ci->Size = static_cast<ULONG>(block.size());
		ci->CounterId = id;
		ci->InstanceId = 0xFFFFFFFF;
		memcpy(ci + 1, star, sizeof(star));
		ULONG status = PerfAddCounters(query_, ci, ci->Size);
		return status != ERROR_SUCCESS ? status : ci->Status;
	}

	_Success_(return == ERROR_SUCCESS) _Check_return_ ULONG Query()
	{
		DWORD needed = 0;
		ULONG status;

		for (;;) {
			status = PerfQueryCounterData(query_, static_cast<PPERF_DATA_HEADER>(data_),
						      cb_, &needed);
			if (status != ERROR_NOT_ENOUGH_MEMORY)
				return status;
			FreeBytes(data_);
			data_ = AllocateBytes(needed);
			cb_ = data_ ? needed : 0;
			if (!data_)
				return ERROR_OUTOFMEMORY;
		}
	}

	/* "<instance> <id> <value>" per value */
	void Print(_In_reads_(nr_ids) const ULONG *ids, size_t nr_ids) const
	{
		LPCBYTE p = static_cast<LPCBYTE>(data_);
		const PERF_DATA_HEADER *dh = reinterpret_cast<const PERF_DATA_HEADER *>(p);
		LPCBYTE end = p + dh->dwTotalSize;
		size_t k = 0;

		for (p += sizeof(*dh); p < end && k < nr_ids; k++) {
			const PERF_COUNTER_HEADER *ch =
				reinterpret_cast<const PERF_COUNTER_HEADER *>(p);
			LPCBYTE q = p + sizeof(*ch);

			if (ch->dwType == PERF_SINGLE_COUNTER) {
				PrintValue("-", ids[k], q);
			} else if (ch->dwType == PERF_MULTIPLE_INSTANCES) {
				const PERF_MULTI_INSTANCES *mi =
					reinterpret_cast<const PERF_MULTI_INSTANCES *>(q);
				LPCBYTE ip = q + sizeof(*mi);

				for (DWORD i = 0; i < mi->dwInstances; i++) {
					const PERF_INSTANCE_HEADER *ih =
						reinterpret_cast<const PERF_INSTANCE_HEADER *>(ip);
					char name[256];

					if (perflib_utf16_to_utf8(
						    reinterpret_cast<const WCHAR *>(ih + 1),
						    (ih->Size - sizeof(*ih)) / 2, name,
						    sizeof(name)) < 0)
						name[0] = 0;
					PrintValue(name, ids[k], ip + ih->Size);
					ip += ih->Size +
					      reinterpret_cast<const PERF_COUNTER_DATA *>(ip +
											  ih->Size)
						      ->dwSize;
				}
			} else {
				printf("%u error %u\n", ids[k], ch->dwStatus);
			}
			p += ch->dwSize;
		}
	}

      private:
	static void PrintValue(const char *instance, ULONG id, LPCBYTE q)
	{
		const PERF_COUNTER_DATA *cd = reinterpret_cast<const PERF_COUNTER_DATA *>(q);
		ULONGLONG v = 0;

		memcpy(&v, cd + 1, cd->dwDataSize <= 8 ? cd->dwDataSize : 8);
		printf("%s %u %llu\n", instance, id, static_cast<unsigned long long>(v));
	}

	HANDLE query_;
	void *data_;
	DWORD cb_;
};

/* the ids of the command line, as an MSVC-style _Out_cap_post_count_ helper */
static void ParseIds(int argc, char **argv, _Out_cap_post_count_(cap, *count) ULONG *ids,
		     size_t cap, size_t *count)
{
	*count = 0;
	for (int i = 2; i < argc && *count < cap; i++)
		ids[(*count)++] = static_cast<ULONG>(strtoul(argv[i], NULL, 0));
}

int __cdecl main(int argc, char **argv)
{
	ULONG ids[32], status;
	size_t nr_ids;
	CounterQuery query;
	GUID set;

	if (argc < 3 || perflib_guid_from_string(argv[1], &set)) {
		fprintf(stderr, "usage: raw_consumer COUNTERSET-GUID ID...\n");
		return 2;
	}
	ParseIds(argc, argv, ids, 32, &nr_ids);
	if ((status = query.Open()) != ERROR_SUCCESS) {
		fprintf(stderr, "PerfOpenQueryHandle: %u\n", status);
		return 1;
	}
	for (size_t i = 0; i < nr_ids; i++)
		if ((status = query.Add(set, ids[i])) != ERROR_SUCCESS) {
			fprintf(stderr, "PerfAddCounters %u: %u\n", ids[i], status);
			return 1;
		}
	if ((status = query.Query()) != ERROR_SUCCESS) {
		fprintf(stderr, "PerfQueryCounterData: %u\n", status);
		return 1;
	}
	query.Print(ids, nr_ids);
	return 0;
}
