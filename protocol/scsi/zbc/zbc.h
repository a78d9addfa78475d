/*
 * The zone engine of zoned logical units (ZBC-1 / ZBC-2 zone model, and
 * ZBC-2 zone domains and realms in zbc_domains.c): zone types and
 * conditions, write pointers, open zone resources, the read/write rules, and
 * the persistent zone state.
 *
 * Two LU kinds are zoned (ZBC-2; Linux sd_zbc.c):
 *   SCSI_LU_ZBC_HM  host managed: PDT 14h, sequential write required (SWR) zones;
 *   SCSI_LU_ZBC_HA  host aware:   PDT 00h with B1h ZONED = 01b, sequential
 *                   write preferred (SWP) zones.
 * Both may start with params.conventional_zones conventional zones.  All
 * zones are params.zone_size blocks (a power of two) except possibly the last.
 *
 * Threads.  The zone state (conditions, write pointers, open counts) is owned
 * by the loop thread: every function here runs there, except those marked
 * "Worker", which only touch the zone layout (never changed after zbc_init)
 * and the persistence half of struct zbc_state (under its locks).  Writes
 * and zone management that moves write pointers hold their blocks' LBA locks
 * (lba_lock.c; zbc_out_lock), so they never overlap in time.
 *
 * Files: zbc_zones.c (layout, set-up, state machine, open zone resources),
 * zbc_rw.c (read/write rules, write tickets), zbc_persist.c, zbc_in.c
 * (REPORT ZONES), zbc_out.c (ZBC OUT), zbc_domains.c (zone domains and
 * realms), zbc_vpd.c (B6h).
 *
 * Persistence (zbc_persist.c): "zones.state" in the LU's state directory; a
 * header then one fixed-size record per zone.  The loop thread encodes a
 * zone's record into a shadow table each time the zone changes; workers copy
 * records from the shadow and pwrite them after the data they describe, so
 * after a kill -9 every acknowledged write is below its zone's write
 * pointer.  Open conditions are volatile (as on real drives): they are
 * recorded as CLOSED, or EMPTY when the write pointer is at the zone start.
 */
#ifndef SBCEMU_ZBC_H
#define SBCEMU_ZBC_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: zbc.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/scsi_internal.h"

/* ZBC additional sense codes (packed ASC/ASCQ); candidates for scsi_sense.h. */
#define ASC_UNALIGNED_WRITE_COMMAND 0x2104
#define ASC_WRITE_BOUNDARY_VIOLATION 0x2105
#define ASC_ATTEMPT_TO_READ_INVALID_DATA 0x2106
#define ASC_ATTEMPT_TO_ACCESS_GAP_ZONE 0x2109
#define ASC_READ_BOUNDARY_VIOLATION 0x2107
#define ASC_ZONE_IS_READ_ONLY 0x2708
#define ASC_ZONE_IS_OFFLINE 0x2c0e
#define ASC_ZONE_IS_INACTIVE 0x2c12
#define ASC_INSUFFICIENT_ZONE_RESOURCES 0x550e

/* ZBC OUT (94h) service actions (ZBC-2 ZBC OUT; sg3_utils sg_zone.c). */
#define ZBC_SA_CLOSE_ZONE 0x01
#define ZBC_SA_FINISH_ZONE 0x02
#define ZBC_SA_OPEN_ZONE 0x03
#define ZBC_SA_RESET_WRITE_POINTER 0x04
/* ZBC IN (95h) service actions; 06h-09h are ZBC-2's zone domains and realms (zbc_domains.c). */
#define ZBC_SA_REPORT_ZONES 0x00
#define ZBC_SA_REPORT_REALMS 0x06
#define ZBC_SA_REPORT_ZONE_DOMAINS 0x07
#define ZBC_SA_ZONE_ACTIVATE 0x08
#define ZBC_SA_ZONE_QUERY 0x09
/* Service actions of the 32-byte forms (7Fh). */
#define ZBC_SA_ZONE_ACTIVATE_32 0xf800
#define ZBC_SA_ZONE_QUERY_32 0xf801

/* REPORT ZONES descriptor ZONE TYPE (ZBC-2 REPORT ZONES; sg3_utils sg_rep_zones.c). */
enum zbc_zone_type {
	ZBC_ZONE_TYPE_CONVENTIONAL = 0x1,
	ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED = 0x2,
	ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED = 0x3,
	ZBC_ZONE_TYPE_SEQUENTIAL_OR_BEFORE_REQUIRED = 0x4, /* ZBC-2: zbc-zd's first domain with sobr_zones */
	ZBC_ZONE_TYPE_GAP = 0x5, /* ZBC-2: no data (zbc-zd's gap_zones between the domains) */
};

/* ZBC zone conditions, with the REPORT ZONES encoding (ZBC-2; libzbc zbc.h). */
enum zbc_zone_condition {
	ZBC_ZC_NOT_WRITE_POINTER = 0x0,
	ZBC_ZC_EMPTY = 0x1,
	ZBC_ZC_IMPLICITLY_OPENED = 0x2,
	ZBC_ZC_EXPLICITLY_OPENED = 0x3,
	ZBC_ZC_CLOSED = 0x4,
	ZBC_ZC_INACTIVE = 0x5, /* ZBC-2: a zone of a realm active in the other zone domain */
	ZBC_ZC_READ_ONLY = 0xd,
	ZBC_ZC_FULL = 0xe,
	ZBC_ZC_OFFLINE = 0xf,
};

struct zbc_zone {
	/* layout: fixed by zbc_init, read by workers too */
	uint64_t start;                /* ZONE START LBA */
	uint64_t length;               /* ZONE LENGTH, blocks */
	enum zbc_zone_type type;
	/* state: loop thread only */
	enum zbc_zone_condition condition;
	uint64_t wp;                   /* WRITE POINTER LBA (write pointer zones; start + length when FULL) */
	bool non_seq;                  /* NON_SEQ: an SWP zone written out of order */
	bool reset_recommended;        /* RESET (RWP RECOMMENDED); never set by the emulator yet */
	uint64_t seq;                  /* bumped on every change (rollback of a failed write) */
	bool mark;                     /* scratch for OPEN ALL */
};

struct zbc_ticket;   /* a write between zbc_write_begin and zbc_write_end (zbc_rw.c) */

struct zbc_state {
	struct zbc_zone *zones;
	uint32_t nr_zones;
	uint64_t zone_size;            /* blocks, a power of two */
	unsigned zone_shift;           /* log2(zone_size) */
	uint32_t nr_conventional;
	uint32_t max_open;             /* MAXIMUM NUMBER OF OPEN SWR ZONES; 0 = no limit */
	uint32_t nr_implicit_open;     /* SWR zones only: SWR is the zone type that uses open zone resources */
	uint32_t nr_explicit_open;
	bool host_aware;
	uint32_t lblocks_per_pblock;   /* 1 << LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	/*
	 * ZBC-2 zone domains and realms (kind zbc-zd, zbc_domains.c): 0 = none.
	 * Domain 0 is the first domain_zones zones (conventional, or SOBR
	 * with params.sobr_zones, nr_conventional then being 0), then
	 * gap_zones gap zones, then domain 1 (SWR); realm r is zones
	 * r * realm_zones .. of each domain.
	 */
	uint32_t realm_zones;
	uint32_t nr_realms;
	uint32_t domain_zones;         /* zones per domain */
	uint32_t gap_zones;            /* gap zones between domain 0 and domain 1 */

	/* loop thread: writes in flight */
	struct zbc_ticket *tickets;

	/* persistence (zbc_persist.c) */
	char path[PATH_MAX + 16];
	int state_fd;
	/*
	 * A backend that keeps state with the medium (backend_ops.state_store:
	 * an RBD image several nodes serve): the state file's image is the blob
	 * "zones" there instead, replaced whole; NULL: the file.
	 */
	struct backend *shared;
	uint64_t shadow_gen;           /* under shadow_lock: bumped by each encode */
	uint64_t stored_gen;           /* under file_lock: the shadow_gen the blob holds */
	uint8_t *image;                /* shared: the header and the records to store, under file_lock */
	uint8_t *shadow;               /* encoded records, one per zone; under shadow_lock */
	pthread_mutex_t shadow_lock;   /* loop thread (encode) vs workers (copy); never held over I/O */
	pthread_mutex_t file_lock;     /* workers: copy + pwrite as one step, so the file never goes back */
};

/* ---- set-up (lu.c) ---- */

/*
 * Builds the zones of a zoned LU (lu->kind SCSI_LU_ZBC_HM or _HA) from
 * lu->params and loads (or creates) lu->state_dir/zones.state.  Does nothing
 * for other kinds.  Returns 0, or -1 with a message in err (bad geometry, a
 * state file written for another zone layout, I/O error).  Blocking I/O:
 * call at LU creation, not from a command.  A second call is a no-op.
 */
int zbc_init(struct scsi_lu *lu, char *err, size_t errlen);
void zbc_fini(struct scsi_lu *lu);
bool zbc_lu_is_zoned(const struct scsi_lu *lu);
/* A power cycle (scsi_device_power_cycle): open zones are closed. */
void zbc_power_on(struct scsi_lu *lu);

/*
 * Zone faults (config keys offline_zones / read_only_zones): marks the zone
 * that starts at zone_start OFFLINE or READ ONLY (or, with ZBC_ZC_EMPTY,
 * repairs a faulty zone back to its initial condition) and writes its record
 * at once.  Set-up time only (blocking I/O).  Returns 0 or -1 with err.
 */
int zbc_set_condition(struct scsi_lu *lu, uint64_t zone_start, enum zbc_zone_condition condition,
		      char *err, size_t errlen);

/* ---- hooks for the SBC handlers (zbc_rw.c) ---- */

/*
 * Read rules (zbc_rw.c: libzbc 01_sk_ascq_check, Linux scsi_debug) for
 * [cmd->lba, cmd->lba + cmd->nblocks):
 * SCSI_OK or SCSI_FAILED with the sense stored.  SCSI_OK on a non-zoned LU.
 * Call from exec (the zone state may change between parse and exec).
 */
enum scsi_result zbc_check_read(struct scsi_cmd *cmd);

/*
 * Write rules (zbc_rw.c) for [cmd->lba, cmd->lba + cmd->nblocks),
 * then the implicit open and the write pointer advance, so that a write
 * queued right behind is checked against the new write pointer.  Call from
 * exec before the data I/O is submitted.  Returns SCSI_OK (go ahead: the
 * command now holds a write ticket) or SCSI_FAILED (sense stored).  SCSI_OK
 * without a ticket on a non-zoned LU, for conventional zones and for
 * TRANSFER LENGTH 0.
 */
enum scsi_result zbc_write_begin(struct scsi_cmd *cmd);
/*
 * Ends cmd's write ticket (no-op without one).  ok = the data reached the
 * backend.  If not, the advance is rolled back, unless the zone changed
 * since (a later write, a zone management command).
 */
void zbc_write_end(struct scsi_cmd *cmd, bool ok);
/* The same for cmd's ticket on lu, another LU than its own (an EXTENDED COPY between LUs); no-op on a non-zoned LU. */
void zbc_write_end_on(struct scsi_lu *lu, struct scsi_cmd *cmd, bool ok);
/*
 * For scsi_cmd_complete() (every command of a zoned LU, on every path:
 * success, failure, abort): ends a write ticket the handler left open, with
 * ok = (status GOOD).  Cheap when the LU has no write in flight.
 */
void zbc_cmd_complete(struct scsi_cmd *cmd);

/*
 * Unwritten blocks (zbc_rw.c).  RESET WRITE POINTER leaves the blocks of an
 * SWR or SOBR zone in the backend, so that the next pass over the zone does
 * not make the file system allocate them again (docs/performance.md), and
 * FINISH ZONE releases what lies between the write pointer and the zone
 * end.  In such a zone every block the host wrote since the last reset lies
 * below the write pointer (a write starts at or below it), so the blocks at
 * or above it hold nothing and read as zeros (ZBC-2: reads of unwritten
 * blocks return the initialization pattern): every command that reads the
 * medium zeroes them after the backend read.
 *
 * zbc_unwritten_plan (loop thread, at exec, before any write pointer
 * advance of the command itself): the unwritten blocks of [lba, lba +
 * nblocks), in *out (NULL when there are none, or the LU is not zoned).
 * The command's LBA lock keeps them unwritten until it completes.  0 or
 * -ENOMEM.  Free *out with free().
 */
struct zbc_unwritten {
	unsigned n;
	struct scsi_lba_range range[];
};
bool zbc_zone_keeps_blocks(const struct zbc_zone *zone);
int zbc_unwritten_plan(const struct scsi_lu *lu, uint64_t lba, uint64_t nblocks, struct zbc_unwritten **out);
/* Any thread: zeroes the unwritten blocks in buf, which holds the blocks from lba (buf_len bytes). */
void zbc_unwritten_zero(const struct zbc_unwritten *u, uint32_t block_size, uint64_t lba, uint8_t *buf,
			size_t buf_len);
/* The same for blocks from lba read into the pieces of sgl. */
void zbc_unwritten_zero_sgl(const struct zbc_unwritten *u, uint32_t block_size, uint64_t lba,
			    const struct scsi_sgl *sgl);

/*
 * Worker: writes the records of the write pointer zones that hold
 * [lba, lba + nblocks) to the state file (the newest state the loop thread
 * has encoded).  flags BE_WRITE_FUA: fdatasync the state file too.  Call
 * after the data write, before the command completes.  0 or a negative errno.
 */
int zbc_persist_range(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks, unsigned flags);
/* Worker: every record (after FORMAT UNIT / SANITIZE).  0 or a negative errno. */
int zbc_persist_all(struct scsi_lu *lu, unsigned flags);
/* Worker: fdatasync of the state file (SYNCHRONIZE CACHE).  0 or a negative errno. */
int zbc_flush(struct scsi_lu *lu);

/*
 * Loop thread, before the I/O of FORMAT UNIT or SANITIZE (ZNR = 0): every
 * write pointer zone that is not READ ONLY or OFFLINE becomes EMPTY.
 * zbc_fill_all_zones: SANITIZE with ZNR = 1: they become FULL instead.
 * The caller's worker then calls zbc_persist_all.
 */
void zbc_reset_all_zones(struct scsi_lu *lu);
void zbc_fill_all_zones(struct scsi_lu *lu);

/* READ CAPACITY(16) byte 12 bits 5:4: 01b on zoned LUs (ZBC-2; Linux sd_zbc.c), else 00b. */
uint8_t zbc_rc_basis(const struct scsi_lu *lu);

/* INQUIRY: the Zoned Block Device Characteristics VPD page (B6h), 64 bytes into buf; returns 64. */
#define ZBC_VPD_B6_LEN 64
size_t zbc_vpd_b6(const struct scsi_lu *lu, uint8_t *buf);

/* ---- command handlers (op_table.c rows) ---- */

/* ZBC IN / REPORT ZONES (zbc_in.c). */
enum scsi_result zbc_report_zones_parse(struct scsi_cmd *cmd);
enum scsi_result zbc_report_zones_exec(struct scsi_cmd *cmd);
/* ZBC OUT: CLOSE ZONE, FINISH ZONE, OPEN ZONE, RESET WRITE POINTER (zbc_out.c). */
enum scsi_result zbc_out_parse(struct scsi_cmd *cmd);
enum scsi_result zbc_out_exec(struct scsi_cmd *cmd);
/* The LBA lock of RESET WRITE POINTER and FINISH ZONE: their zones, exclusively. */
void zbc_out_lock(struct scsi_cmd *cmd);

/* ---- engine internals shared by zbc_*.c ---- */

static inline bool zbc_is_write_pointer_zone(const struct zbc_zone *zone)
{
	return zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED ||
	       zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED ||
	       zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_OR_BEFORE_REQUIRED;
}

/*
 * ZBC-2 SOBR zones (libzbc 02/003, 007, 023, 031): FINISH ZONE, one zone or
 * ALL, is ILLEGAL REQUEST, INVALID FIELD IN CDB while such a zone could be
 * finished (open or CLOSED; zbc_out.c).
 */
static inline bool zbc_zone_is_sobr(const struct zbc_zone *zone)
{
	return zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_OR_BEFORE_REQUIRED;
}

/* The zone that holds lba (lba < capacity). */
static inline struct zbc_zone *zbc_zone_of(struct zbc_state *z, uint64_t lba)
{
	return &z->zones[lba >> z->zone_shift];
}

static inline uint32_t zbc_zone_index(const struct zbc_state *z, const struct zbc_zone *zone)
{
	return (uint32_t)(zone - z->zones);
}

/*
 * URSWRZ: unrestricted reads of SWR and SOBR zones.  Host-aware LUs always;
 * host-managed ones as the Zoned Block Device Control mode page's URSWRZ
 * says (default: the urswrz config key; spc_mode_pages.c).
 */
static inline bool zbc_urswrz(const struct scsi_lu *lu)
{
	return lu->zbc->host_aware || lu->mode_current.urswrz;
}

/* libzbc ZT_W_OZR: only sequential write required zones take part in the open zone resources. */
static inline bool zbc_zone_uses_resources(const struct zbc_zone *zone)
{
	return zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED;
}

static inline bool zbc_condition_is_open(enum zbc_zone_condition c)
{
	return c == ZBC_ZC_IMPLICITLY_OPENED || c == ZBC_ZC_EXPLICITLY_OPENED;
}

/*
 * Makes room for one more open SWR zone (ZBC-2 open zone resources; Linux scsi_debug): with MAX zones
 * open an implicitly opened zone is closed first; if all MAX are explicitly
 * open: false, *sense = DATA PROTECT, INSUFFICIENT ZONE RESOURCES.
 */
bool zbc_zone_acquire_resource(struct zbc_state *z, struct scsi_sense_info *sense);

/* The zone changed: bump its seq and re-encode its record (zbc_persist.c). */
void zbc_zone_changed(struct zbc_state *z, struct zbc_zone *zone);
/* Moves zone to condition, keeping the open counts (no rule checks). */
void zbc_zone_set_condition(struct zbc_state *z, struct zbc_zone *zone, enum zbc_zone_condition condition);

/*
 * Zone management on one zone (zbc_zones.c), loop thread.  Each returns true
 * or false with *sense set, and never does I/O.
 */
bool zbc_zone_open(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense);
bool zbc_zone_close(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense);
bool zbc_zone_finish(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense);
/* FULL with the write pointer at the zone end / EMPTY with it at the start (no checks). */
void zbc_zone_fill(struct zbc_state *z, struct zbc_zone *zone);
void zbc_zone_empty(struct zbc_state *z, struct zbc_zone *zone);
/* The sense of a zone in READ ONLY / OFFLINE condition for management and writes. */
bool zbc_zone_fault_sense(const struct zbc_zone *zone, struct scsi_sense_info *sense);
/*
 * zbc_domains.c: the zone domains and realms of a zbc-zd LU (params.realm_zones
 * != 0): checks the layout and makes the zones of every realm's other
 * domain INACTIVE (before the zone state file, which may say otherwise, is
 * loaded).  0, or -1 with err.
 */
int zbc_domains_setup(struct scsi_lu *lu, struct zbc_state *z, char *err, size_t errlen);
bool zbc_domains_enabled(const struct scsi_lu *lu);
/* Whether zone (repaired from a fault) belongs to a realm that is active in the other domain. */
bool zbc_domains_zone_inactive(struct zbc_state *z, const struct zbc_zone *zone);
enum scsi_result zbc_report_realms_exec(struct scsi_cmd *cmd);
enum scsi_result zbc_report_zone_domains_exec(struct scsi_cmd *cmd);
enum scsi_result zbc_zone_activate_parse(struct scsi_cmd *cmd);
enum scsi_result zbc_zone_activate_exec(struct scsi_cmd *cmd);

/* Frees the write tickets left (zbc_fini). */
void zbc_rw_fini(struct zbc_state *z);

/* Persistence internals (zbc_persist.c). */
int zbc_state_open(struct scsi_lu *lu, char *err, size_t errlen);
void zbc_state_close(struct zbc_state *z);
/* Synchronous write of one record (set-up time). */
int zbc_state_write_now(struct zbc_state *z, uint32_t index);
/*
 * A backend opened in the background that keeps state with the medium: the
 * zones as the node that had the medium before left them (loop thread, no
 * I/O; no write is in flight then).
 */
void zbc_reload(struct scsi_lu *lu);

#endif
