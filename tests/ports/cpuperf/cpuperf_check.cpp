// SPDX-License-Identifier: MIT
/*
 * cpuperf_check.cpp - the test's driver for the CpuPerfCounters class (not part of the
 * sample): two samples INTERVAL_MS apart, /proc/stat read right after each, and for every
 * instance one line
 *   <name> <% Processor> <% User> <% Privileged> <% Idle> <Interrupts/sec> \
 *          <proc % busy> <proc % user> <proc % system> <proc % idle>
 * computed as the sample's comments say (two samples, PerfTime100NSec for the timers,
 * PerfTimeStamp / PerfFreq for the rates). /proc/stat's line is "cpuN" for "node,N" and
 * "cpu" for the totals (those hold the mean of the CPUs, as on Windows): busy is every
 * field but idle and iowait, user is user + nice, system is system + irq + softirq.
 * Exit 0, 1 on a ReadData failure, 2 on bad usage.
 */
#include <perflib/win32compat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <map>
#include "CpuPerfCounters.h"

struct ProcCpu {
	double total, idle, user, sys;
};

static std::map<std::string, ProcCpu> ReadProcStat()
{
	std::map<std::string, ProcCpu> m;
	FILE *f = fopen("/proc/stat", "r");
	char name[32];
	unsigned long long v[10];

	if (!f)
		return m;
	while (fscanf(f, "%31s", name) == 1) {
		if (strncmp(name, "cpu", 3) != 0 ||
		    fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != 10) {
			int c;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		ProcCpu p;
		p.total = 0;
		for (int i = 0; i < 8; i++) /* guest time is inside user already */
			p.total += (double)v[i];
		p.idle = (double)(v[3] + v[4]);
		p.user = (double)(v[0] + v[1]);
		p.sys = (double)(v[2] + v[5] + v[6]);
		m[name] = p;
	}
	fclose(f);
	return m;
}

static std::string Narrow(const wchar_t *w)
{
	std::string s;
	for (unsigned i = 0; i < 16 && w[i]; i++)
		s += w[i] < 0x80 ? (char)w[i] : '?';
	return s;
}

int main(int argc, char **argv)
{
	unsigned const dataMax = 256;
	static CpuPerfData d0[dataMax], d1[dataMax];
	CpuPerfTimestamp t0, t1;
	CpuPerfCounters cpc;
	unsigned used0, used1, status;
	char *end;
	unsigned long ms = argc == 2 ? strtoul(argv[1], &end, 10) : 0;

	if (argc != 2 || *end || ms == 0 || ms > 60000) {
		fprintf(stderr, "usage: cpuperf_check INTERVAL_MS (1..60000)\n");
		return 2;
	}
	status = cpc.ReadData(&t0, d0, dataMax, &used0);
	std::map<std::string, ProcCpu> p0 = ReadProcStat();
	if (status != ERROR_SUCCESS) {
		printf("ReadData failed with %u\n", status);
		return 1;
	}
	Sleep((DWORD)ms);
	status = cpc.ReadData(&t1, d1, dataMax, &used1);
	std::map<std::string, ProcCpu> p1 = ReadProcStat();
	if (status != ERROR_SUCCESS) {
		printf("ReadData failed with %u\n", status);
		return 1;
	}
	double dt = (double)(t1.PerfTime100NSec - t0.PerfTime100NSec);
	double secs = (double)(t1.PerfTimeStamp - t0.PerfTimeStamp) / (double)t1.PerfFreq;
	if (dt <= 0 || secs <= 0 || t0.PerfFreq != t1.PerfFreq) {
		printf("bad time stamps: 100ns %.0f, seconds %f\n", dt, secs);
		return 1;
	}
	printf("instances %u %u\n", used0, used1);
	for (unsigned i = 0; i < used1; i++) {
		const CpuPerfData &b = d1[i];
		const CpuPerfData *a = NULL;
		for (unsigned j = 0; j < used0; j++)
			if (memcmp(d0[j].Name, b.Name, sizeof(b.Name)) == 0)
				a = &d0[j];
		if (!a)
			continue;
		std::string name = Narrow(b.Name);
		size_t comma = name.find(',');
		std::string cpu = name.substr(comma == std::string::npos ? 0 : comma + 1);
		std::string line = cpu == "_Total" ? "cpu" : "cpu" + cpu;
		ProcCpu q0 = p0[line], q1 = p1[line];
		double pt = q1.total - q0.total;
		if (pt <= 0)
			pt = 1;
		printf("%s %.2f %.2f %.2f %.2f %.1f %.2f %.2f %.2f %.2f\n", name.c_str(),
		       100.0 * (1.0 - (double)(b.ProcessorTime - a->ProcessorTime) / dt),
		       100.0 * (double)(b.UserTime - a->UserTime) / dt,
		       100.0 * (double)(b.PrivilegedTime - a->PrivilegedTime) / dt,
		       100.0 * (double)(b.IdleTime - a->IdleTime) / dt,
		       (double)(b.Interrupts - a->Interrupts) / secs,
		       100.0 * (pt - (q1.idle - q0.idle)) / pt, 100.0 * (q1.user - q0.user) / pt,
		       100.0 * (q1.sys - q0.sys) / pt, 100.0 * (q1.idle - q0.idle) / pt);
	}
	return 0;
}
