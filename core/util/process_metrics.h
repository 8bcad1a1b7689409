/*
 * process_metrics.h - the process_* metrics that Prometheus client libraries export about the
 * process serving /metrics, read from procfs the way prometheus/client_golang's process collector
 * reads them (prometheus/client_golang: prometheus/process_collector.go for names and help,
 * prometheus/process_collector_procfsenabled.go for the values, through prometheus/procfs:
 * proc_stat.go, proc_limits.go, proc.go FileDescriptorsLen, stat.go btime):
 *
 *   process_cpu_seconds_total         counter: (utime + stime) / USER_HZ of <proc>/self/stat
 *   process_virtual_memory_bytes      gauge: vsize of <proc>/self/stat, in bytes
 *   process_resident_memory_bytes     gauge: rss of <proc>/self/stat (pages) times the page size
 *   process_start_time_seconds        gauge: btime of <proc>/stat + starttime / USER_HZ of
 *                                     <proc>/self/stat, seconds since the Unix epoch
 *   process_open_fds                  gauge: entries of <proc>/self/fd (procfs: the directory's
 *                                     st_size on a real procfs of Linux 6.2+, else the entries
 *                                     counted, the directory's own descriptor among them)
 *   process_max_fds                   gauge: the soft limit "Max open files" of
 *                                     <proc>/self/limits
 *   process_virtual_memory_max_bytes  gauge: the soft limit "Max address space" of the same file
 *
 * A limit of "unlimited" reads as 18446744073709551615 (2^64 - 1), as procfs reads it. A file that
 * cannot be read or parsed leaves its metrics out (client_golang without ReportErrors does the
 * same). client_golang's process_network_{receive,transmit}_bytes_total are not exported: they
 * read the network namespace's /proc/net/netstat, the pod's traffic rather than the process's.
 * USER_HZ is sysconf(_SC_CLK_TCK) (procfs assumes 100, which Linux reports on every architecture
 * Kubernetes runs on).
 */
#ifndef GPUTRI_PROCESS_METRICS_H
#define GPUTRI_PROCESS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"

/* The limit procfs reports for "unlimited". */
#define PROCESS_UNLIMITED UINT64_MAX

/* What was read; a have_ flag false leaves its metrics out of the rendering. */
struct process_stats {
    bool have_stat; /* cpu_seconds, virtual_memory_bytes, resident_memory_bytes */
    double cpu_seconds;
    uint64_t virtual_memory_bytes;
    uint64_t resident_memory_bytes;
    bool have_start_time; /* start_time_seconds (needs <proc>/stat's btime too) */
    double start_time_seconds;
    bool have_open_fds;
    uint64_t open_fds;
    bool have_limits; /* max_fds and max_virtual_memory_bytes */
    uint64_t max_fds;
    uint64_t max_virtual_memory_bytes;
};

/*
 * process_stats_parse_stat() - fill have_stat, cpu_seconds, virtual_memory_bytes,
 * resident_memory_bytes and, with `btime` (seconds since the epoch the system booted; 0:
 * unknown), have_start_time and start_time_seconds from the text of /proc/<pid>/stat (proc(5):
 * the command in parentheses may hold spaces and ')'; the fields follow the last ')').
 * `ticks_per_second` (> 0) is USER_HZ, `page_size` (> 0) in bytes. Returns false, leaving *s
 * unchanged, on text it cannot parse. Pure.
 */
bool process_stats_parse_stat(const char *text, uint64_t btime, long ticks_per_second,
                              long page_size, struct process_stats *s);

/*
 * process_stats_parse_limits() - fill have_limits, max_fds and max_virtual_memory_bytes from
 * the text of /proc/<pid>/limits (the soft limits, "unlimited" as PROCESS_UNLIMITED). Returns
 * false, leaving *s unchanged, when either line is missing or not a number. Pure.
 */
bool process_stats_parse_limits(const char *text, struct process_stats *s);

/* process_stats_parse_btime() - the btime line of /proc/stat, seconds since the epoch; 0 when
 * there is none. Pure. */
uint64_t process_stats_parse_btime(const char *text);

/*
 * process_stats_read() - read the calling process's stats under `proc_root` (NULL: "/proc"; tests
 * pass a directory laid out as procfs: <root>/stat, <root>/self/{stat,limits,fd/}). Every part
 * read independently; what fails is left out (*s zeroed first). Thread-safe (reads files only).
 */
void process_stats_read(const char *proc_root, struct process_stats *s);

/*
 * process_metrics_render() - append the families of `s` that were read, each with its HELP and
 * TYPE lines (client_golang's help text), in the text exposition format 0.0.4. Returns K_OK or
 * the buf error. Pure but for `out`.
 */
int process_metrics_render(const struct process_stats *s, struct buf *out);

/* process_metrics_append() - process_stats_read(NULL) and process_metrics_render(): what the
 * daemons add to /metrics. Returns K_OK or the buf error. Thread-safe. */
int process_metrics_append(struct buf *out);

#endif
