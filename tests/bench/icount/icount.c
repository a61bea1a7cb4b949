// SPDX-License-Identifier: GPL-2.0
/*
 * icount.so: a QEMU TCG plugin (API version 1, QEMU 7.2) that counts guest
 * instructions between marks set by a guest program, for exact and
 * repeatable CPU-cost figures (tests/bench/icount/run.sh drives it).
 *
 *   qemu-system-x86_64 -smp 1 -accel tcg,thread=single \
 *     -icount shift=1,sleep=off \
 *     -plugin icount.so,map=System.map,mark=0x4c1000,out=counts.txt
 *
 * Arguments (key=value, each may be given once unless said otherwise):
 *   map=FILE    System.map or /proc/kallsyms text: kernel instructions are
 *               attributed to the function (t/T/w/W symbol) they fall in
 *   mark=ADDR   address of the guest program's mark stubs: 256 stubs, 16
 *               bytes apart; a translation block that starts at stub N is
 *               mark N (icount-work.c defines them)
 *   out=FILE    where the records go (default: qemu_plugin_outs, which
 *               needs -d plugin)
 *   top=N       functions listed per mark (default 10)
 *   call=NAME   count calls of NAME too (repeatable); calls of a default
 *               set of spin-lock entry points and page clear/copy
 *               functions are always counted
 *
 * How it counts. At translation time each block is classified once: kernel
 * if its address is >= 0xffff800000000000, else user; its instructions are
 * split into runs that belong to one System.map function. Each run becomes
 * an inline "add N" to that function's counter, executed by TCG whenever
 * the block runs, so counting costs a few host instructions per block and
 * no helper call. A "call" of a function is an execution of a block that
 * starts at the function's address. The counters are plain globals: exact
 * with one vCPU, or several vCPUs under -accel tcg,thread=single (they run
 * round-robin on one host thread); with thread=multi they would race. With
 * more than one vCPU a per-block callback also splits kernel/user per vCPU.
 *
 * Caveats, all deterministic: a block that faults part way (a user store
 * that takes a page fault) was already counted whole. QEMU 7.2 runs a
 * rep-prefixed string instruction one iteration per block execution, so
 * it counts once per iteration plus once for the exit: "rep stosq" of a
 * 4K page is 513 instructions, "rep stosb" of it 4097 (icount-work's
 * repstos phase shows it). The "rep" records (those executions, per
 * function) say how much of a count is string work; which clear_page
 * variant runs depends on the CPU model (qemu64 has no ERMS:
 * clear_page_rep). Kernel addresses no symbol covers (below the first,
 * from _end to the next symbol, such as modules missing from the map,
 * or 64K past the last) count as "[unknown]".
 *
 * Output, one record per line, "KIND key=value ...", at each mark:
 *   mark seq=S id=ID kernel=K user=U rep_kernel=R rep_user=R
 *   vcpu seq=S vcpu=V kernel=K user=U               (more than one vCPU)
 *   call seq=S name=NAME n=CALLS                    (every counted name)
 *   func seq=S rank=I name=NAME insns=N             (top N by insns)
 *   rep seq=S rank=I name=NAME n=ITERATIONS         (top N by rep iterations)
 * Each value counts what happened since the previous mark (seq S-1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-v1.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START	0xffff800000000000ULL
#define MARK_STRIDE	16
#define MARK_COUNT	256
#define MAX_CALLS	64
#define MAX_VCPUS	64
#define MAX_TOP		100
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct sym {
	uint64_t addr;
	char *name;
	int rank;		/* preference among aliases: lower wins */
};

/* Sorted by address; syms[nsyms] is "[unknown]". */
static struct sym *syms;
static size_t nsyms;
static uint64_t *fn_insns, *fn_insns_prev;
static uint64_t *fn_rep, *fn_rep_prev;

struct call {
	char *name;
	uint64_t addr;		/* 0: not in the map */
	uint64_t n, prev;
};

static struct call calls[MAX_CALLS];
static int ncalls;

static const char *const default_calls[] = {
	"_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_lock_irq",
	"_raw_spin_lock_bh", "_raw_spin_trylock",
	"queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
	"__pv_queued_spin_lock_slowpath",
	"clear_page_erms", "clear_page_rep", "clear_page_orig", "copy_page",
};

struct totals {
	uint64_t kernel, user, rep_kernel, rep_user;
};

static struct totals tot, tot_prev;
static struct totals vcpu_tot[MAX_VCPUS], vcpu_prev[MAX_VCPUS];
static int nvcpus = 1;

static uint64_t mark_base;
static unsigned long seq;
static int top = 10;
static FILE *out;

static void emit(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (out)
		fputs(buf, out);
	else
		qemu_plugin_outs(buf);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* Prefer global functions, then names with fewer leading underscores. */
static int sym_rank(char type, const char *name)
{
	int r = 0;

	if (type == 't' || type == 'w')
		r += 100;
	if (type == 'W' || type == 'w')
		r += 10;
	while (*name++ == '_')
		r++;
	return r;
}

static int load_map(const char *path)
{
	size_t cap = 1 << 16, n = 0, i, j;
	char line[512], name[256], type;
	uint64_t addr;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "icount: cannot open map %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	syms = malloc(cap * sizeof(*syms));
	if (!syms)
		goto nomem;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		/* the kernel image ends: nothing of it is past _end */
		if (!strcmp(name, "_end"))
			strcpy(name, "[unknown]");
		else if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr < KERNEL_START)
			continue;
		if (n + 1 >= cap) {
			struct sym *s;

			cap *= 2;
			s = realloc(syms, cap * sizeof(*syms));
			if (!s)
				goto nomem;
			syms = s;
		}
		syms[n].addr = addr;
		syms[n].name = strdup(name);
		syms[n].rank = sym_rank(type, name);
		if (!syms[n].name)
			goto nomem;
		n++;
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "icount: no text symbols in %s\n", path);
		return -1;
	}

	/* Calls are looked up by every name, aliases included. */
	for (i = 0; i < n; i++)
		for (j = 0; j < (size_t)ncalls; j++)
			if (!strcmp(syms[i].name, calls[j].name))
				calls[j].addr = syms[i].addr;

	qsort(syms, n, sizeof(*syms), sym_cmp);
	for (i = 0, j = 0; i < n; i++) {
		if (j && syms[j - 1].addr == syms[i].addr) {
			free(syms[i].name);
			continue;
		}
		syms[j++] = syms[i];
	}
	nsyms = j;
	/* The last function's size is unknown: give it 64K. */
	syms[nsyms].addr = syms[nsyms - 1].addr + 0x10000;
	syms[nsyms].name = "[unknown]";
	return 0;
nomem:
	fclose(f);
	fprintf(stderr, "icount: out of memory reading %s\n", path);
	return -1;
}

/* Index of the function holding a kernel address; nsyms if none. */
static size_t sym_find(uint64_t addr)
{
	size_t lo = 0, hi = nsyms;

	if (!nsyms || addr < syms[0].addr || addr >= syms[nsyms].addr)
		return nsyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A rep/repne-prefixed movs, stos, cmps, scas, lods, ins or outs. */
static bool is_rep_string(const uint8_t *p, size_t len)
{
	bool rep = false;
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t b = p[i];

		if (b == 0xf3 || b == 0xf2) {
			rep = true;
			continue;
		}
		/* operand/address size, segment, lock, REX */
		if (b == 0x66 || b == 0x67 || b == 0x2e || b == 0x36 ||
		    b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65 ||
		    b == 0xf0 || (b & 0xf0) == 0x40)
			continue;
		return rep && ((b >= 0xa4 && b <= 0xa7) ||
			       (b >= 0xaa && b <= 0xaf) ||
			       (b >= 0x6c && b <= 0x6f));
	}
	return false;
}

struct top_entry {
	size_t idx;
	uint64_t n;
};

/* Top entries of cur - prev, largest first; returns how many. */
static int top_of(const uint64_t *cur, const uint64_t *prev, size_t len,
		  struct top_entry *t)
{
	int used = 0, k;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t d = cur[i] - prev[i];

		if (!d || (used == top && d <= t[used - 1].n))
			continue;
		k = used < top ? used++ : used - 1;
		while (k > 0 && t[k - 1].n < d) {
			t[k] = t[k - 1];
			k--;
		}
		t[k].idx = i;
		t[k].n = d;
	}
	return used;
}

static void do_mark(unsigned int vcpu, void *udata)
{
	unsigned int id = (unsigned int)(uintptr_t)udata;
	struct top_entry t[MAX_TOP];
	int i, used;

	seq++;
	emit("mark seq=%lu id=%u vcpu=%u kernel=%" PRIu64 " user=%" PRIu64
	     " rep_kernel=%" PRIu64 " rep_user=%" PRIu64 "\n", seq, id, vcpu,
	     tot.kernel - tot_prev.kernel, tot.user - tot_prev.user,
	     tot.rep_kernel - tot_prev.rep_kernel,
	     tot.rep_user - tot_prev.rep_user);
	tot_prev = tot;
	for (i = 0; nvcpus > 1 && i < nvcpus; i++) {
		emit("vcpu seq=%lu vcpu=%d kernel=%" PRIu64 " user=%" PRIu64
		     "\n", seq, i, vcpu_tot[i].kernel - vcpu_prev[i].kernel,
		     vcpu_tot[i].user - vcpu_prev[i].user);
		vcpu_prev[i] = vcpu_tot[i];
	}
	for (i = 0; i < ncalls; i++) {
		if (!calls[i].addr)
			continue;
		emit("call seq=%lu name=%s n=%" PRIu64 "\n", seq,
		     calls[i].name, calls[i].n - calls[i].prev);
		calls[i].prev = calls[i].n;
	}
	if (!nsyms)
		goto flush;
	used = top_of(fn_insns, fn_insns_prev, nsyms + 1, t);
	for (i = 0; i < used; i++)
		emit("func seq=%lu rank=%d name=%s insns=%" PRIu64 "\n", seq,
		     i + 1, syms[t[i].idx].name, t[i].n);
	used = top_of(fn_rep, fn_rep_prev, nsyms + 1, t);
	for (i = 0; i < used; i++)
		emit("rep seq=%lu rank=%d name=%s n=%" PRIu64 "\n", seq,
		     i + 1, syms[t[i].idx].name, t[i].n);
	memcpy(fn_insns_prev, fn_insns, (nsyms + 1) * sizeof(*fn_insns));
	memcpy(fn_rep_prev, fn_rep, (nsyms + 1) * sizeof(*fn_rep));
flush:
	if (out)
		fflush(out);
}

/* udata: instruction count << 1 | kernel */
static void vcpu_count(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;

	if (vcpu >= MAX_VCPUS)
		return;
	if (u & 1)
		vcpu_tot[vcpu].kernel += u >> 1;
	else
		vcpu_tot[vcpu].user += u >> 1;
}

static void add(struct qemu_plugin_tb *tb, uint64_t *ctr, uint64_t n)
{
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 ctr, n);
}

static uint64_t insn_addr(struct qemu_plugin_tb *tb, size_t i)
{
	return qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
}

/* +1 per execution of one instruction (rep string: per iteration) */
static void add_insn(struct qemu_plugin_insn *insn, uint64_t *ctr)
{
	qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
						   ctr, 1);
}

static void kernel_tb(struct qemu_plugin_tb *tb, uint64_t pc, size_t n)
{
	size_t i = 0, f, j;
	int c;

	while (i < n) {
		f = sym_find(insn_addr(tb, i));
		for (j = i + 1; j < n; j++)
			if (sym_find(insn_addr(tb, j)) != f)
				break;
		add(tb, &fn_insns[f], j - i);
		i = j;
	}
	for (c = 0; c < ncalls; c++)
		if (calls[c].addr == pc)
			add(tb, &calls[c].n, 1);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	bool kernel = pc >= KERNEL_START;

	add(tb, kernel ? &tot.kernel : &tot.user, n);
	if (nvcpus > 1)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_count,
						     QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)(n << 1 | kernel));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (!is_rep_string(qemu_plugin_insn_data(insn),
				   qemu_plugin_insn_size(insn)))
			continue;
		add_insn(insn, kernel ? &tot.rep_kernel : &tot.rep_user);
		if (kernel && nsyms)
			add_insn(insn, &fn_rep[sym_find(qemu_plugin_insn_vaddr(insn))]);
	}
	if (kernel && nsyms)
		kernel_tb(tb, pc, n);
	if (!kernel && mark_base && pc >= mark_base &&
	    pc < mark_base + MARK_COUNT * MARK_STRIDE &&
	    (pc - mark_base) % MARK_STRIDE == 0)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, do_mark, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)((pc - mark_base) /
									 MARK_STRIDE));
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	emit("exit kernel=%" PRIu64 " user=%" PRIu64 "\n", tot.kernel, tot.user);
	if (out)
		fclose(out);
	out = NULL;
}

static int add_call(const char *name)
{
	int i;

	for (i = 0; i < ncalls; i++)
		if (!strcmp(calls[i].name, name))
			return 0;
	if (ncalls == MAX_CALLS) {
		fprintf(stderr, "icount: more than %d call= names\n", MAX_CALLS);
		return -1;
	}
	calls[ncalls].name = strdup(name);
	if (!calls[ncalls].name)
		return -1;
	ncalls++;
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *map = NULL, *outpath = NULL;
	size_t i;
	char *end;
	int a;

	if (info->version.cur != QEMU_PLUGIN_VERSION) {
		fprintf(stderr, "icount: built for plugin API %d, QEMU has %d..%d\n",
			QEMU_PLUGIN_VERSION, info->version.min, info->version.cur);
		return -1;
	}
	if (!info->system_emulation) {
		fprintf(stderr, "icount: needs system emulation\n");
		return -1;
	}
	nvcpus = info->system.max_vcpus;
	if (nvcpus > MAX_VCPUS) {
		fprintf(stderr, "icount: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(default_calls); i++)
		if (add_call(default_calls[i]))
			return -1;
	for (a = 0; a < argc; a++) {
		char *v = strchr(argv[a], '=');

		if (!v) {
			fprintf(stderr, "icount: argument %s is not key=value\n", argv[a]);
			return -1;
		}
		*v++ = '\0';
		if (!strcmp(argv[a], "map")) {
			map = v;
		} else if (!strcmp(argv[a], "out")) {
			outpath = v;
		} else if (!strcmp(argv[a], "call")) {
			if (add_call(v))
				return -1;
		} else if (!strcmp(argv[a], "mark")) {
			errno = 0;
			mark_base = strtoull(v, &end, 0);
			if (errno || *end || !mark_base || mark_base >= KERNEL_START) {
				fprintf(stderr, "icount: bad mark address %s\n", v);
				return -1;
			}
		} else if (!strcmp(argv[a], "top")) {
			top = strtol(v, &end, 10);
			if (*end || top < 1 || top > MAX_TOP) {
				fprintf(stderr, "icount: top must be 1..%d\n", MAX_TOP);
				return -1;
			}
		} else {
			fprintf(stderr, "icount: unknown argument %s\n", argv[a]);
			return -1;
		}
	}
	if (map) {
		if (load_map(map))
			return -1;
		fn_insns = calloc(nsyms + 1, sizeof(*fn_insns));
		fn_insns_prev = calloc(nsyms + 1, sizeof(*fn_insns));
		fn_rep = calloc(nsyms + 1, sizeof(*fn_rep));
		fn_rep_prev = calloc(nsyms + 1, sizeof(*fn_rep));
		if (!fn_insns || !fn_insns_prev || !fn_rep || !fn_rep_prev) {
			fprintf(stderr, "icount: out of memory\n");
			return -1;
		}
	}
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out) {
			fprintf(stderr, "icount: cannot write %s: %s\n", outpath,
				strerror(errno));
			return -1;
		}
	}
	emit("icount api=%d..%d vcpus=%d symbols=%zu mark=0x%" PRIx64 "\n",
	     info->version.min, info->version.cur, nvcpus, nsyms, mark_base);
	for (a = 0; a < ncalls; a++)
		if (map && !calls[a].addr)
			emit("nocall name=%s\n", calls[a].name);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
