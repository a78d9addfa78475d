/*
 * Declarations shared by the SPC-4 command handlers (spc_*.c) and START
 * STOP UNIT, and by nothing else: identification helpers (INQUIRY, VPD),
 * the state files (spc_persist.c), the reservation and medium-removal
 * state (spc_pr.c, used by spc_pr_in.c, spc_pr_out.c, spc_reserve.c,
 * spc_misc.c) and the mode pages (spc_mode_pages.c, used by spc_mode.c).
 */
#ifndef SBCEMU_SPC_H
#define SBCEMU_SPC_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: spc.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/scsi_internal.h"

/* SPC-4 version descriptors (SPC-4 table 148; sg3_utils sg_lib_data.c). */
#define SPC_VERSION_SAM_5 0x00a0
#define SPC_VERSION_SPC_4 0x0460
#define SPC_VERSION_SBC_3 0x04c0
#define SPC_VERSION_SBC_4 0x0600
#define SPC_VERSION_ZBC 0x0620

/* Standard INQUIRY VERSION: 06h = SPC-4 (libiscsi's Inquiry tests accept 04h..06h only). */
#define SPC_INQUIRY_VERSION 0x06

/* PERIPHERAL QUALIFIER 011b: no logical unit at this LUN (SPC-4 6.6.2, table 143). */
#define SPC_PQ_NOT_SUPPORTED 0x03

/*
 * Byte 0 of INQUIRY data and of every VPD page: PERIPHERAL QUALIFIER and
 * PERIPHERAL DEVICE TYPE.  lu NULL means the LUN has no logical unit: 011b /
 * 1Fh.  Zoned host-managed LUs are 14h; everything else (conventional,
 * host-aware zoned) is a direct-access block device, 00h.
 */
static inline uint8_t spc_peripheral_byte(const struct scsi_lu *lu)
{
	if (!lu)
		return (SPC_PQ_NOT_SUPPORTED << 5) | SCSI_PDT_NO_DEVICE;
	if (lu->kind == SCSI_LU_ZBC_HM)
		return SCSI_PDT_ZBC_HOST_MANAGED;
	return SCSI_PDT_DIRECT_ACCESS;
}

/* Copies an ASCII string into a len-byte field, space padded (SPC-4 4.4.1). */
void spc_put_ascii(uint8_t *dst, const char *src, size_t len);

/*
 * A stable 64-bit hash of the device name and LUN (FNV-1a), used where the
 * configuration leaves an identifier to be derived (NAA, serial number).
 */
uint64_t spc_lu_hash(const struct scsi_lu *lu);

/* spc_vpd.c: answers INQUIRY with EVPD = 1.  lu may be NULL (no LU at the LUN). */
enum scsi_result spc_inquiry_vpd(struct scsi_cmd *cmd, struct scsi_lu *lu, uint8_t page_code);

/* ---- persistent state files (spc_persist.c) ---- */

/*
 * One state file in the LU's state directory (saved mode pages, APTPL
 * reservations).  Images are built on the loop thread and written by a
 * worker (write to a temporary file, fsync, rename), so the loop never
 * blocks on the disk; generations make sure an older image never replaces
 * a newer one when two writes overtake each other on the workers.
 */
struct spc_persist_file {
	char path[PATH_MAX + 32];
	uint64_t gen_next;        /* loop thread */
	pthread_mutex_t lock;     /* workers: serialises the writes */
	uint64_t gen_written;     /* under lock */
};

/* Sets up f for the file name in lu's state directory. */
void spc_persist_init(struct spc_persist_file *f, const struct scsi_lu *lu, const char *name);
void spc_persist_fini(struct spc_persist_file *f);
/*
 * Reads the whole file (at most max bytes) into a malloc'd buffer: 0, or a
 * negative errno (-ENOENT when there is none).  Blocking: set-up time only.
 */
int spc_persist_load(const struct spc_persist_file *f, uint8_t **data, size_t *len, size_t max);
/*
 * Writes image (len bytes; ownership passes; NULL / 0 removes the file) from
 * a worker for cmd, then runs after (may be NULL) on the loop thread.  A
 * write error fails cmd with the errno's sense.  Returns SCSI_PENDING (or
 * SCSI_FAILED when out of memory).
 */
enum scsi_result spc_persist_cmd(struct scsi_cmd *cmd, struct spc_persist_file *f, uint8_t *image, size_t len,
				 enum scsi_result (*after)(struct scsi_cmd *cmd));
/* The same, synchronously on the calling thread (set-up and tests): 0 or a negative errno. */
int spc_persist_write_now(struct spc_persist_file *f, const uint8_t *image, size_t len);

/* ---- reservations and medium removal (spc_pr_state.c, spc_pr_in.c, spc_pr_out.c, spc_reserve.c) ---- */

/* PERSISTENT RESERVE OUT TYPE codes (SPC-4 table 198). */
enum spc_pr_type {
	SPC_PR_WRITE_EXCLUSIVE = 0x1,
	SPC_PR_EXCLUSIVE_ACCESS = 0x3,
	SPC_PR_WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 0x5,
	SPC_PR_EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 0x6,
	SPC_PR_WRITE_EXCLUSIVE_ALL_REGISTRANTS = 0x7,
	SPC_PR_EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 0x8,
};

/*
 * A registration: an I_T nexus identity (initiator port name and relative
 * target port, or every target port with ALL_TG_PT) and its reservation key.
 * Registrations outlive the nexus (SPC-4 5.13.1): a later nexus with the same
 * identity is the same registrant.
 */
struct spc_pr_registration {
	struct spc_pr_registration *next;
	uint64_t key;
	char initiator_port_name[256];
	uint16_t relative_target_port;
	bool all_tg_pt;
	uint8_t transport_id[256];      /* for READ FULL STATUS */
	uint16_t transport_id_len;
};

struct spc_pr_state {
	struct spc_pr_registration *regs;   /* in registration order */
	uint32_t generation;                /* PRGENERATION */
	bool reserved;
	uint8_t type;                       /* enum spc_pr_type, when reserved */
	struct spc_pr_registration *holder; /* non all-registrants types: the holder's registration */
	bool aptpl;                         /* persist through power loss */
	struct spc_persist_file file;
	bool file_present;                  /* the APTPL file exists (or is being written) */
	/* PREVENT ALLOW MEDIUM REMOVAL: the nexuses that prevent removal */
	const struct scsi_nexus **prevent;
	unsigned prevent_len, prevent_cap;
};

bool spc_pr_type_valid(uint8_t type);
/* All registrants types: every registrant is a reservation holder (SPC-4 5.13). */
bool spc_pr_type_all_registrants(uint8_t type);
/* Registrants only and all registrants types: registrants may access the medium. */
bool spc_pr_type_registrants_access(uint8_t type);
/* True if reg belongs to the I_T nexus n. */
bool spc_pr_reg_matches(const struct spc_pr_registration *reg, const struct scsi_nexus *n);
/* The registration of the I_T nexus n, or NULL. */
struct spc_pr_registration *spc_pr_find(const struct spc_pr_state *pr, const struct scsi_nexus *n);
/* True if the I_T nexus n holds the persistent reservation. */
bool spc_pr_is_holder(const struct spc_pr_state *pr, const struct scsi_nexus *n);
/* Removes reg (and the reservation it holds, SPC-4 5.13); frees it. */
void spc_pr_unregister(struct scsi_lu *lu, struct spc_pr_registration *reg, const struct scsi_nexus *except);
/* Establishes ua for every live nexus whose registration is reg (except the issuing one). */
void spc_pr_ua_reg(struct scsi_lu *lu, const struct spc_pr_registration *reg, const struct scsi_nexus *except,
		   enum scsi_ua ua);
/* Establishes ua for every live nexus that is registered, but except. */
void spc_pr_ua_registrants(struct scsi_lu *lu, const struct scsi_nexus *except, enum scsi_ua ua);
/*
 * After a change of the persistent reservation state: with APTPL the new
 * state is written (SPC-4 5.13, APTPL), else any saved state is removed.
 * Completes cmd through spc_persist_cmd (returns SCSI_PENDING) or returns
 * SCSI_OK when there is nothing to write.
 */
enum scsi_result spc_pr_changed(struct scsi_cmd *cmd);

/*
 * PREVENT ALLOW MEDIUM REMOVAL is tracked per I_T nexus (SBC-4 5.14: medium
 * removal stays prevented while any I_T nexus prevents it);
 * lu->prevent_count is the number of nexuses that prevent it.
 */
void spc_prevent_set(struct scsi_lu *lu, const struct scsi_nexus *nexus, bool prevent);

/* True if the LU has a persistent reservation or any registration (SPC-4 5.13). */
bool spc_pr_active(const struct scsi_lu *lu);
/*
 * SPC-4 5.13, CRH = 1: a RESERVE(6)/(10) or RELEASE(6)/(10) from the
 * persistent reservation holder, or from a registrant while a registrants
 * only or all registrants reservation is held, completes with GOOD and
 * changes nothing.
 */
bool spc_pr_crh_no_op(const struct scsi_lu *lu, const struct scsi_nexus *nexus);

/* ---- mode pages (spc_mode_pages.c; the commands are in spc_mode.c) ---- */

#define SPC_MODE_PAGE_MAX 32 /* longest page served, header included */
#define SPC_MODE_PAGES_MAX 8 /* pages in spc_mode_pages[] at most */

/* One mode page (SPC-4 7.5.7): header bytes included in defaults/changeable. */
struct spc_mode_page_def {
	const char *name;
	uint8_t page_code;
	uint8_t subpage_code;
	bool spf;                       /* sub_page format (4-byte header) */
	uint8_t len;                    /* bytes, header included */
	const uint8_t *defaults;
	const uint8_t *changeable;      /* bit mask of what MODE SELECT may change (bytes from the header on) */
	/*
	 * Checks the values of the changeable fields of a page that MODE
	 * SELECT sends (may be NULL): the byte offset of a bad field in the
	 * page, or -1 when the values are acceptable.
	 */
	int (*check)(const uint8_t *page);
	/* Whether the LU has the page (NULL: every LU). */
	bool (*present)(const struct scsi_lu *lu);
	/* Sets the LU's own default values in a copy of defaults (NULL: none). */
	void (*lu_defaults)(const struct scsi_lu *lu, uint8_t *page);
};

/* In ascending (page code, subpage code) order, as MODE SENSE returns them. */
extern const struct spc_mode_page_def spc_mode_pages[];
extern const size_t spc_mode_pages_len;

struct spc_mode_state {
	uint8_t current[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX];
	uint8_t saved[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX];
	bool saved_by_select;  /* MODE SELECT with SP = 1 saved pages (now or in the file): they no longer follow the defaults */
	struct spc_persist_file file;
};

/* The LU's default values of page i (the table's, with the LU's own: lu_defaults). */
void spc_mode_page_defaults(const struct scsi_lu *lu, size_t i, uint8_t *page);
/* Whether the LU has page i. */
bool spc_mode_page_present(const struct scsi_lu *lu, size_t i);
/* Keeps lu->mode_current in step with the current pages. */
void spc_mode_sync_current(struct scsi_lu *lu);
/* The saved-pages file image for the current values (malloc'd), or NULL. */
uint8_t *spc_mode_save_image(const struct spc_mode_state *m, size_t *len);

#endif
