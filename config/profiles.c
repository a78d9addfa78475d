/*
 * Device profiles (docs/profiles.md): `profile = NAME` presets the keys a
 * [lun] section (or cfgstring) leaves unset, so an LU looks like a kind of
 * device the field knows, and refuses keys that contradict it.  What a
 * profile makes the SCSI core do is said by the fields it sets (the core
 * never sees the profile's name): write_protect, removable, product_type,
 * quirks, and for sbc4-minimal the minimal command set (daemon/sbcemud/setup.c).
 */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

/* The key must keep the profile's value: a LUN that sets it otherwise is refused. */
static void require_bool(const struct cfg_lun_check *c, struct cfg_lun *l, const char *key, bool *field, bool want,
			 const char *profile)
{
	if (!cfg_lun_key_set(l, key))
		*field = want;
	else if (*field != want)
		cfg_lun_fail(c, l, key, "profile %s needs %s = %s", profile, key, want ? "true" : "false");
}

/* The profile's preset, unless the LUN sets the key itself. */
static void preset_u32(const struct cfg_lun *l, const char *key, uint32_t *field, uint32_t value)
{
	if (!cfg_lun_key_set(l, key))
		*field = value;
}

static void refuse_kind(const struct cfg_lun_check *c, const struct cfg_lun *l, const char *profile)
{
	if (l->kind != CFG_LU_CONVENTIONAL)
		cfg_lun_fail(c, l, "kind", "profile %s is a conventional disk (kind = conventional)", profile);
}

void cfg_finish_profile(const struct cfg_lun_check *c, struct cfg_lun *l)
{
	switch (l->profile) {
	case CFG_PROFILE_NONE:
		break;
	case CFG_PROFILE_READ_ONLY:
		require_bool(c, l, "write_protect", &l->write_protect, true, "read-only");
		break;
	case CFG_PROFILE_CARD_READER:
		refuse_kind(c, l, "card-reader");
		require_bool(c, l, "removable", &l->removable, true, "card-reader");
		require_bool(c, l, "thin_provisioning", &l->thin_provisioning, false, "card-reader");
		preset_u32(l, "product_type", &l->product_type, 0x05); /* Secure Digital card */
		if (!cfg_lun_key_set(l, "product"))
			snprintf(l->product, sizeof(l->product), "card reader");
		break;
	case CFG_PROFILE_USB_BRIDGE:
		refuse_kind(c, l, "usb-bridge");
		require_bool(c, l, "thin_provisioning", &l->thin_provisioning, false, "usb-bridge");
		preset_u32(l, "quirks", &l->quirks, CFG_QUIRK_ALL);
		if (!cfg_lun_key_set(l, "product"))
			snprintf(l->product, sizeof(l->product), "usb bridge");
		break;
	case CFG_PROFILE_SBC4_MINIMAL:
		refuse_kind(c, l, "sbc4-minimal");
		/* Without UNMAP, GET LBA STATUS, WRITE SCATTERED and WRITE ATOMIC, their VPD claims would lie. */
		require_bool(c, l, "thin_provisioning", &l->thin_provisioning, false, "sbc4-minimal");
		require_bool(c, l, "write_scattered", &l->write_scattered, false, "sbc4-minimal");
		if (l->max_atomic_transfer_length || l->max_atomic_transfer_length_with_boundary)
			cfg_lun_fail(c, l, "max_atomic_transfer_length", "profile sbc4-minimal has no WRITE ATOMIC");
		break;
	}
}

const char *cfg_profile_name(enum cfg_profile profile)
{
	switch (profile) {
	case CFG_PROFILE_NONE:
		return "none";
	case CFG_PROFILE_SBC4_MINIMAL:
		return "sbc4-minimal";
	case CFG_PROFILE_USB_BRIDGE:
		return "usb-bridge";
	case CFG_PROFILE_CARD_READER:
		return "card-reader";
	case CFG_PROFILE_READ_ONLY:
		return "read-only";
	}
	return "?";
}
