// SPDX-License-Identifier: MIT
/*
 * cpp_monitor.cpp - a C++ PDH consumer in the style of Windows monitoring code: a query
 * class owning its handles, the instances of a wildcard path collected into a std::map, the
 * names kept in generic-text strings, printed with std::cout. Built with g++ and clang++,
 * ANSI and UNICODE (-fshort-wchar), with the Windows headers before the C++ ones and, with
 * -DSTD_HEADERS_FIRST, after them. Output compared byte for byte
 * (tests/data/win32/cpp_monitor.out).
 *
 * With -fshort-wchar std::wstring is not usable (its members are compiled into libstdc++ for
 * a 32-bit wchar_t): the UNICODE names live in std::u16string, whose code is all in the
 * headers; WCHAR text reaches std::cout through sprintf_s("%S"), which writes UTF-8.
 *
 *   cpp_monitor OBJECT COUNTER
 */
#ifdef STD_HEADERS_FIRST
#include <iostream>
#include <map>
#include <string>
#endif
#include <windows.h>
#include <tchar.h>
#include <strsafe.h>
#include <pdh.h>
#include <pdhmsg.h>
#ifndef STD_HEADERS_FIRST
#include <iostream>
#include <map>
#include <string>
#endif
#include <vector>

#ifdef UNICODE
typedef std::u16string tstring;
#else
typedef std::string tstring;
#endif

static tstring to_tstring(LPCTSTR s)
{
	return tstring(reinterpret_cast<const tstring::value_type *>(s));
}

/* generic text as UTF-8 for std::cout: %S is the other width's string in a narrow format */
static std::string utf8(const tstring &s)
{
	char buf[512];

#ifdef UNICODE
	sprintf_s(buf, sizeof(buf), "%S", reinterpret_cast<LPCWSTR>(s.c_str()));
#else
	sprintf_s(buf, sizeof(buf), "%s", s.c_str());
#endif
	return buf;
}

class CounterQuery
{
      public:
	CounterQuery() : query_(NULL), counter_(NULL)
	{
	}
	~CounterQuery()
	{
		if (query_)
			PdhCloseQuery(query_);
	}
	PDH_STATUS Open(LPCTSTR path)
	{
		PDH_STATUS st = PdhOpenQuery(NULL, 0, &query_);

		if (st == ERROR_SUCCESS)
			st = PdhAddEnglishCounter(query_, path, 0, &counter_);
		if (st == ERROR_SUCCESS)
			st = PdhCollectQueryData(query_);
		return st;
	}
	PDH_STATUS Values(std::map<tstring, std::vector<double>> &out)
	{
		DWORD bytes = 0, count = 0;
		PDH_STATUS st =
			PdhGetFormattedCounterArray(counter_, PDH_FMT_DOUBLE, &bytes, &count, NULL);
		std::vector<BYTE> buf;

		if (st != PDH_MORE_DATA)
			return st;
		buf.resize(bytes);
		PPDH_FMT_COUNTERVALUE_ITEM items =
			reinterpret_cast<PPDH_FMT_COUNTERVALUE_ITEM>(buf.data());
		st = PdhGetFormattedCounterArray(counter_, PDH_FMT_DOUBLE, &bytes, &count, items);
		for (DWORD i = 0; st == ERROR_SUCCESS && i < count; i++)
			out[to_tstring(items[i].szName)].push_back(items[i].FmtValue.doubleValue);
		return st;
	}

      private:
	PDH_HQUERY query_;
	PDH_HCOUNTER counter_;
};

int _tmain(int argc, TCHAR *argv[])
{
	TCHAR path[PDH_MAX_COUNTER_PATH];
	std::map<tstring, std::vector<double>> values;
	CounterQuery q;
	PDH_STATUS st;

	if (argc != 3) {
		std::cerr << "usage: cpp_monitor OBJECT COUNTER" << std::endl;
		return 2;
	}
	if (FAILED(StringCchPrintf(path, ARRAYSIZE(path), _T("\\%s(*)\\%s"), argv[1], argv[2])))
		return 1;
	st = q.Open(path);
	if (st == ERROR_SUCCESS)
		st = q.Values(values);
	if (st != ERROR_SUCCESS) {
		std::cout << "failed: 0x" << std::hex << static_cast<unsigned long>(st)
			  << std::endl;
		return 1;
	}
	tstring name = to_tstring(path);
	std::cout << utf8(name) << ": " << values.size() << " names, path of " << name.size()
		  << " characters" << std::endl;
	for (std::map<tstring, std::vector<double>>::const_iterator it = values.begin();
	     it != values.end(); ++it) {
		std::cout << "  " << utf8(it->first) << " (" << it->first.length() << ")";
		for (size_t i = 0; i < it->second.size(); i++)
			std::cout << " " << it->second[i];
		std::cout << std::endl;
	}
	/* std::u16string / std::string searches and comparisons on the names */
	std::cout << "find: " << (values.find(to_tstring(_T("beta"))) != values.end())
		  << " rfind: " << name.rfind(_T('\\'))
		  << " compare: " << (to_tstring(_T("alpha")) < to_tstring(_T("beta")))
		  << std::endl;
	return 0;
}
