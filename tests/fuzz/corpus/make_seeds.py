#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (tests/fuzz/README.md).

Each seed is a small valid input in the harness's format: real CDBs with
their parameter lists (SPC-4, SBC-4, ZBC), real iSCSI PDUs and logins
(RFC 7143), configuration files of the repository, and a valid TCMU ring
(linux/target_core_user.h).  Run from anywhere; it rewrites
tests/fuzz/corpus/<harness>/ next to itself.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def be16(v):
    return struct.pack(">H", v)


def be24(v):
    return struct.pack(">I", v)[1:]


def be32(v):
    return struct.pack(">I", v)


def be64(v):
    return struct.pack(">Q", v)


def cdb(*b, length=None):
    c = bytes(b)
    if length:
        c = c.ljust(length, b"\0")
    return c


def write(harness, name, data):
    d = os.path.join(HERE, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_scsi_cdb: byte 0 flags/variant, commands separated by #NEXT# ----

SEP = b"#NEXT#"
CONV, K4, HM, HA, PI1, PI2, PI3, ZD = range(8)


def scsi(variant, *cmds, flags=0):
    return bytes([variant | flags]) + SEP.join(cmds)


def rw10(op, lba, n, data=b""):
    return cdb(op, 0, *be32(lba), 0, *be16(n), 0) + data


def rw16(op, lba, n, data=b"", b1=0):
    return cdb(op, b1, *be64(lba), *be32(n), 0, 0) + data


def cdb32(sa, lba, n, b10=0, data=b""):
    # SBC-4 5.x (32-byte CDBs, 7Fh): ADDITIONAL CDB LENGTH 18h, service action, protect bits in byte 10
    c = bytearray(32)
    c[0] = 0x7F
    c[7] = 0x18
    c[8:10] = be16(sa)
    c[10] = b10
    c[12:20] = be64(lba)
    c[20:24] = be32(lba & 0xFFFFFFFF)  # EXPECTED INITIAL LOGICAL BLOCK REFERENCE TAG
    c[28:32] = be32(n)
    return bytes(c) + data


def pr_out(sa, type_=0, key=0, sa_key=0, flags=0, extra=b""):
    param = be64(key) + be64(sa_key) + b"\0" * 4 + bytes([flags, 0]) + b"\0\0" + extra
    return cdb(0x5F, sa, type_, 0, 0, *be32(len(param)), 0) + param


def iscsi_tid(name):
    # SPC-4 7.6.4.6: FORMAT CODE 01b, PROTOCOL IDENTIFIER 5h, null-terminated name padded to 4
    n = name.encode() + b"\0"
    n += b"\0" * (-len(n) % 4)
    if len(n) < 20:
        n = n.ljust(20, b"\0")
    return bytes([0x45, 0]) + be16(len(n)) + n


def scsi_seeds():
    tur = cdb(0, length=6)
    inquiry = cdb(0x12, 0, 0, 0, 0xFF, 0)
    write("fuzz_scsi_cdb", "inquiry_vpd", scsi(CONV, inquiry, cdb(0x12, 1, 0x00, 0, 0xFF, 0),
                                                 cdb(0x12, 1, 0xB0, 0, 0xFF, 0), cdb(0x12, 1, 0x83, 0, 0xFF, 0),
                                                 cdb(0x12, 1, 0xB1, 0, 0xFF, 0), cdb(0x12, 1, 0xB2, 0, 0xFF, 0)))
    write("fuzz_scsi_cdb", "capacity_rsoc", scsi(CONV, cdb(0x9E, 0x10, *([0] * 8), 0, 0, 0, 32, 0, 0),
                                                   cdb(0x25, length=10), cdb(0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0),
                                                   cdb(0xA3, 0x0D, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0),
                                                   cdb(0xA0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
                                                   cdb(0x03, 0, 0, 0, 252, 0)))
    block = bytes(range(256)) * 2
    write("fuzz_scsi_cdb", "write_read_verify", scsi(CONV, rw10(0x2A, 5, 1, block), rw10(0x28, 5, 1),
                                                       rw16(0x8A, 7, 2, block * 2), rw16(0x88, 6, 3),
                                                       cdb(0x2F, 2, *be32(5), 0, *be16(1), 0) + block,
                                                       cdb(0x35, length=10), cdb(0x34, 0, *be32(0), 0, 0, 8, 0)))
    write("fuzz_scsi_cdb", "write_read_4k_cached", scsi(K4, rw10(0x2A, 1, 1, bytes(4096)), rw10(0x28, 1, 1),
                                                          cdb(0x1B, 0, 0, 0, 0, 0), cdb(0x1E, 0, 0, 0, 1, 0),
                                                          cdb(0x1B, 0, 0, 0, 1, 0), cdb(0x35, length=10)))
    # MODE SELECT(10) of the Caching page (SBC-4 6.5.5) with WCE, and of the Control page (SPC-4 7.5.8) with D_SENSE
    caching = bytes([0x08, 0x12, 0x04]) + bytes(17)
    control = bytes([0x0A, 0x0A, 0x04, 0x10, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0])  # D_SENSE
    for name, page in (("mode_select_caching", caching), ("mode_select_control", control)):
        param = bytes(8) + page
        write("fuzz_scsi_cdb", name, scsi(CONV, cdb(0x5A, 0, 0x3F, 0, 0, 0, 0, 0x10, 0, 0),
                                          cdb(0x55, 0x10, 0, 0, 0, 0, 0, *be16(len(param)), 0) + param,
                                          cdb(0x1A, 0, 0x3F, 0, 0xFF, 0), rw10(0x28, 100, 1), rw10(0x28, 500, 1)))
    write("fuzz_scsi_cdb", "mode_select6", scsi(CONV, cdb(0x15, 0x11, 0, 0, 4 + len(caching), 0) + bytes(4) + caching))
    # UNMAP (SBC-4 5.30): header, one block descriptor
    unmap = be16(22) + be16(16) + bytes(4) + be64(8) + be32(16) + bytes(4)
    write("fuzz_scsi_cdb", "unmap", scsi(CONV, rw10(0x2A, 8, 1, block), cdb(0x42, 0, 0, 0, 0, 0, 0, *be16(len(unmap)), 0) + unmap,
                                         cdb(0x9E, 0x12, *be64(0), *be32(64), 0, 0)))
    ws = cdb(0x93, 0x08, *be64(0), *be32(32), 0, 0) + bytes(512)
    write("fuzz_scsi_cdb", "write_same", scsi(CONV, ws, cdb(0x41, 0, *be32(40), 0, *be16(4), 0) + block))
    # PERSISTENT RESERVE OUT (SPC-4 6.16): register, reserve (Write Exclusive), read keys, preempt from nexus 1
    # nexus 0 and 1 in turn (flag 08h): register both, reserve, read, preempt, read the full status
    write("fuzz_scsi_cdb", "pr_register_reserve", scsi(CONV, pr_out(0, sa_key=0xA1), pr_out(0, sa_key=0xB2),
                                                         pr_out(1, 1, key=0xA1),
                                                         cdb(0x5E, 0, 0, 0, 0, 0, 0, 0x10, 0, 0),
                                                         cdb(0x5E, 1, 0, 0, 0, 0, 0, 0x10, 0, 0),
                                                         pr_out(4, 3, key=0xB2, sa_key=0xA1),
                                                         cdb(0x5E, 3, 0, 0, 0, 0, 0, 0x10, 0, 0),
                                                         pr_out(2, 3, key=0xB2), flags=0x08))
    tid = iscsi_tid("iqn.2026-12.org.sbcemu:i1,i,0x800000000002")
    move = be64(0xA1) + be64(0xC3) + bytes([0, 0x02]) + be16(1) + be32(len(tid)) + tid
    write("fuzz_scsi_cdb", "pr_register_and_move", scsi(CONV, pr_out(0, sa_key=0xA1), pr_out(1, 1, key=0xA1),
                                                          cdb(0x5F, 0x07, 0x01, 0, 0, *be32(len(move)), 0) + move))
    # APTPL (the state file), REPORT CAPABILITIES, CLEAR; SPEC_I_PT with a TransportID list (refused: SIP_C 0)
    spec = be32(len(tid)) + tid
    write("fuzz_scsi_cdb", "pr_aptpl_clear", scsi(CONV, pr_out(0, sa_key=0xD4, flags=0x01),
                                                    pr_out(6, sa_key=0xD5, flags=0x05),
                                                    cdb(0x5E, 2, 0, 0, 0, 0, 0, 0x10, 0, 0), pr_out(3, key=0xD5),
                                                    pr_out(0, sa_key=0xD6, flags=0x08, extra=spec)))
    write("fuzz_scsi_cdb", "reserve6", scsi(CONV, cdb(0x16, length=6), rw10(0x2A, 0, 1, block), cdb(0x17, length=6), flags=0x08))
    # WRITE SCATTERED(16) (SBC-4 5.48): LBDOF 1 block, 2 ranges of 1 block
    hdr = bytes(32) + be64(10) + be32(1) + bytes(20) + be64(20) + be32(1) + bytes(20)
    dout = hdr.ljust(512, b"\0") + block + block
    write("fuzz_scsi_cdb", "write_scattered16", scsi(CONV, cdb(0x9F, 0x12, 0, 0, *be16(1), 0, 0, *be16(2), *be32(2), 0, 0) + dout))
    # WRITE SCATTERED(32) on the type 2 LU: LBA RANGE DESCRIPTOR OFFSET b12-13, count b16-17, BTL b28-31
    ws32 = bytearray(32)
    ws32[0], ws32[7] = 0x7F, 0x18
    ws32[8:10] = be16(0x11)
    ws32[12:14] = be16(1)
    ws32[16:18] = be16(1)
    ws32[28:32] = be32(1)
    write("fuzz_scsi_cdb", "write_scattered32_pi2", scsi(PI2, bytes(ws32) + (bytes(32) + be64(3) + be32(1) + bytes(20)).ljust(4096, b"\0") + bytes(4096)))
    # COMPARE AND WRITE (SBC-4 5.3): 1 block to compare, 1 to write
    write("fuzz_scsi_cdb", "compare_and_write", scsi(CONV, rw10(0x2A, 3, 1, block),
                                                       cdb(0x89, 0, *be64(3), 0, 0, 0, 1, 0, 0) + block + bytes(512)))
    # SANITIZE (SBC-4 5.31): OVERWRITE with a 4-byte pattern, BLOCK ERASE, EXIT FAILURE MODE
    ow = bytes([0x01, 0]) + be16(4) + b"\xde\xad\xbe\xef"
    write("fuzz_scsi_cdb", "sanitize_overwrite", scsi(CONV, cdb(0x48, 0x01, 0, 0, 0, 0, 0, *be16(len(ow)), 0) + ow,
                                                        tur, cdb(0x03, 0, 0, 0, 252, 0), rw10(0x28, 0, 1)))
    write("fuzz_scsi_cdb", "sanitize_block_erase", scsi(CONV, cdb(0x48, 0x02, length=10), cdb(0x48, 0x1F, length=10), tur))
    write("fuzz_scsi_cdb", "sanitize_pi", scsi(PI1, cdb(0x48, 0x01, 0, 0, 0, 0, 0, *be16(len(ow)), 0) + ow, rw10(0x28, 0, 1)))
    # FORMAT UNIT (SBC-4 5.4): FMTDATA with a short header; on the PI LU FMTPINFO 10b (type 1) and 11b
    write("fuzz_scsi_cdb", "format_unit", scsi(CONV, cdb(0x04, 0x10, 0, 0, 0, 0) + bytes(4), tur, rw10(0x28, 0, 1)))
    write("fuzz_scsi_cdb", "format_unit_pi", scsi(PI1, cdb(0x04, 0x90, 0, 0, 0, 0) + bytes(4),
                                                    cdb(0x04, 0xD0, 0, 0, 0, 0) + bytes([0, 0, 0, 0]),
                                                    cdb(0x9E, 0x10, *([0] * 8), 0, 0, 0, 32, 0, 0)))
    write("fuzz_scsi_cdb", "format_unit_pi2_long", scsi(PI2, cdb(0x04, 0xF0, 0, 0, 0, 0) + bytes([0, 0, 0, 0, 0, 0, 0, 0]),
                                                          cdb(0x04, 0xF0, 0, 0, 0, 0) + bytes([1, 0, 0, 0, 1, 0, 0, 0]),
                                                          cdb(0x9E, 0x10, *([0] * 8), 0, 0, 0, 32, 0, 0)))
    # WRITE ATOMIC(16) (SBC-4 5.49)
    write("fuzz_scsi_cdb", "write_atomic16", scsi(CONV, cdb(0x9C, 0, *be64(32), 0, 0, *be16(2), 0, 0) + block * 2,
                                                    cdb(0x9C, 0, *be64(33), 0, 0, *be16(2), 0, 0) + block * 2, flags=0x40))
    write("fuzz_scsi_cdb", "write_atomic_torn_pi3", scsi(PI3, cdb(0x9C, 0, *be64(32), 0, 0, *be16(2), 0, 0) + bytes(1024),
                                                           cdb(0x9C, 0, *be64(40), 0, 0, *be16(2), 0, 0) + bytes(1024),
                                                           rw16(0x88, 10, 4, b1=0x20), rw16(0x88, 100, 1, b1=0x20)))
    # Protection information: WRITE(10) with WRPROTECT 1 and 8-byte tuples; 32-byte READ/WRITE on type 2
    tuple_ = be16(0) + be16(0) + be32(6)
    write("fuzz_scsi_cdb", "pi1_protect", scsi(PI1, rw10(0x2A, 6, 1, b""), rw10(0x28, 6, 1)) +
          SEP + cdb(0x2A, 0x20, *be32(6), 0, 0, 1, 0) + bytes(512) + tuple_ + SEP + cdb(0x28, 0x20, *be32(6), 0, 0, 1, 0))
    write("fuzz_scsi_cdb", "pi2_32byte", scsi(PI2, cdb32(0x0B, 2, 1, 0x20, bytes(4096) + be16(0) + be16(0) + be32(2) + be16(0) + be16(0) + be32(3)),
                                                cdb32(0x09, 2, 1, 0x20), cdb32(0x0A, 2, 1, 0), cdb32(0x0D, 2, 1, 0, bytes(4096))))
    # ZBC (ZBC-2 5): REPORT ZONES, OPEN ZONE, a write at the write pointer, FINISH, RESET WRITE POINTER all
    zone = 16
    write("fuzz_scsi_cdb", "zbc_hm", scsi(HM, cdb(0x95, 0x00, *be64(0), *be32(4096), 0, 0),
                                          cdb(0x94, 0x03, *be64(2 * zone), 0, 0, 0, 0, 0, 0),
                                          rw16(0x8A, 2 * zone, 1, block),
                                          cdb(0x94, 0x02, *be64(2 * zone), 0, 0, 0, 0, 0, 0),
                                          cdb(0x94, 0x01, *be64(3 * zone), 0, 0, 0, 0, 0, 0),
                                          cdb(0x94, 0x04, *be64(0), 0, 0, 0, 0, 1, 0),
                                          rw16(0x88, 5 * zone, 1), cdb(0x12, 1, 0xB6, 0, 0xFF, 0)))
    write("fuzz_scsi_cdb", "zbc_ha", scsi(HA, rw16(0x8A, 3 * zone + 4, 1, block), cdb(0x95, 0x00, *be64(0), *be32(4096), 0x01, 0),
                                          cdb(0x95, 0x00, *be64(0), *be32(64), 0x80 | 0x10, 0),
                                          cdb(0x94, 0x04, *be64(3 * zone), 0, 0, 0, 0, 0, 0)))
    # ZBC-2 zone domains: REPORT REALMS, REPORT ZONE DOMAINS, ZONE QUERY / ZONE ACTIVATE(16) of realm 0
    # (libzbc's 16-byte layout: b2 ZSRC | domain, b3-8 ZONE ID, b9-12 ALLOCATION LENGTH, b13-14 zones)
    zq = lambda sa, zone_id, n: cdb(0x95, sa, 0x40, *be64(zone_id)[2:], *be32(4096), *be16(n), 0)
    write("fuzz_scsi_cdb", "zbc_zd", scsi(ZD, cdb(0x95, 0x06, *be64(0), *be32(4096), 0, 0),
                                          cdb(0x95, 0x07, *be64(0), *be32(4096), 0, 0),
                                          zq(0x09, 0, 2), zq(0x08, 0, 2), zq(0x08, 6 * zone, 2),
                                          cdb(0x95, 0x00, *be64(0), *be32(4096), 0, 0), rw16(0x8A, 0, 1, block)))
    # Two commands in the task set at once, then an ABORT TASK (the harness's FFh pseudo-command)
    write("fuzz_scsi_cdb", "overlap_abort", scsi(CONV, rw10(0x2A, 0, 1, block), rw10(0x2A, 0, 1, block),
                                                 bytes([0xFF, 0, 1]), bytes([0xFF, 3, 0]), rw10(0x28, 0, 1), flags=0x40 | 0x80))
    write("fuzz_scsi_cdb", "split_buffers", scsi(CONV, rw10(0x2A, 9, 2, block * 2), rw10(0x28, 9, 2), inquiry, flags=0x30))
    write("fuzz_scsi_cdb", "defects_get_lba_status", scsi(CONV, cdb(0x37, 0, 0x18, 0, 0, 0, 0, 0x10, 0, 0),
                                                            cdb(0xB7, 0, 0x18, 0, 0, 0, 0, 0, 0x10, 0, 0, 0),
                                                            cdb(0x9E, 0x12, *be64(0), *be32(4096), 0, 0),
                                                            cdb(0x8B, 0, *be64(4), *be32(1), 0, 0) + bytes(512)))


# ---- iSCSI (RFC 7143 11) ----

def bhs(op, b1=0, lun=0, itt=0, f20=0, cmd_sn=0, exp_stat_sn=0, rest=b"", data=b"", ahs=b"", immediate=False):
    h = bytearray(48)
    h[0] = op | (0x40 if immediate else 0)
    h[1] = b1
    h[4] = len(ahs) // 4
    h[5:8] = be24(len(data))
    h[8:16] = be64(lun)
    h[16:20] = be32(itt)
    h[20:24] = be32(f20)
    h[24:28] = be32(cmd_sn)
    h[28:32] = be32(exp_stat_sn)
    h[32:32 + len(rest)] = rest
    return bytes(h)


def pad(data):
    return data + b"\0" * (-len(data) % 4)


def scsi_cmd(itt, cmd_sn, cdb_, edtl=0, flags=0x80, data=b"", ahs=b"", lun=0, attr=1):
    return bhs(0x01, flags | attr, lun=lun << 48, itt=itt, f20=edtl, cmd_sn=cmd_sn, exp_stat_sn=2,
               rest=cdb_[:16].ljust(16, b"\0"), data=data, ahs=ahs) + ahs + data


def kv(*pairs):
    return b"".join(p.encode() + b"\0" for p in pairs)


def framed(*pdus):
    # the framed format: BHS + AHS + data, without padding or digests
    return b"".join(pdus)


def raw(*pdus):
    out = b""
    for p in pdus:
        h = p[:48]
        ahs = h[4] * 4
        dl = int.from_bytes(h[5:8], "big")
        out += p[:48 + ahs + dl] + b"\0" * (-dl % 4)
    return out


def iscsi_seeds():
    tur = cdb(0, length=6)
    inquiry = cdb(0x12, 0, 0, 0, 0xFF, 0)
    block = bytes(range(256)) * 2
    nop = bhs(0x00, 0x80, itt=0x77, f20=0xFFFFFFFF, cmd_sn=0, exp_stat_sn=2, data=b"ping") + b"ping"
    text = kv("SendTargets=All")
    text_req = bhs(0x04, 0x80, itt=0x88, f20=0xFFFFFFFF, data=text) + text
    tmf = bhs(0x02, 0x80 | 1, itt=0x99, f20=0x12, immediate=True)
    logout = bhs(0x06, 0x80 | 0, itt=0xAA, immediate=False)
    session = [scsi_cmd(0x10, 1, tur), scsi_cmd(0x11, 2, inquiry, 255, 0x80 | 0x40),
               scsi_cmd(0x12, 3, rw10(0x2A, 1, 1), 512, 0x80 | 0x20, block),
               scsi_cmd(0x13, 4, rw10(0x28, 1, 1), 512, 0x80 | 0x40), nop, tmf, text_req, logout]
    # prelude normal login (1), framed (4), numbered (8)
    write("fuzz_iscsi_pdu", "framed_session", bytes([0x01 | 0x04 | 0x08, CONV]) + framed(*session))
    write("fuzz_iscsi_pdu", "framed_session_digests", bytes([0x03 | 0x04 | 0x08, CONV]) + framed(*session))
    write("fuzz_iscsi_pdu", "framed_session_zbc", bytes([0x01 | 0x04 | 0x08, HM]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x11, 2, cdb(0x95, 0, *be64(0), *be32(4096), 0, 0), 4096, 0xC0),
                 scsi_cmd(0x12, 3, rw16(0x8A, 32, 1), 512, 0xA0, block)))
    # the same as raw bytes with the right CmdSNs (the prelude login used CmdSN 1, immediate)
    numbered = [scsi_cmd(0x10, 1, tur), scsi_cmd(0x11, 2, inquiry, 255, 0xC0),
                scsi_cmd(0x12, 3, rw10(0x2A, 1, 1), 512, 0xA0, block)]
    write("fuzz_iscsi_pdu", "raw_session", bytes([0x01, CONV]) + raw(*numbered))
    # the login in the input itself (no prelude)
    login_text = kv("InitiatorName=iqn.2026-12.org.sbcemu:initiator", "TargetName=iqn.2026-12.org.sbcemu:fuzz",
                    "SessionType=Normal", "HeaderDigest=None", "DataDigest=None", "MaxRecvDataSegmentLength=65536",
                    "ImmediateData=Yes", "InitialR2T=No")
    login = bhs(0x03, 0x80 | (1 << 2) | 3, lun=0x800000000001 << 16, itt=1, f20=(1 << 16), cmd_sn=1,
                data=login_text, immediate=True) + login_text
    write("fuzz_iscsi_pdu", "raw_login_and_command", bytes([0x00, CONV]) + raw(login, scsi_cmd(0x10, 1, tur),
                                                                                scsi_cmd(0x11, 2, inquiry, 255, 0xC0)))
    write("fuzz_iscsi_pdu", "framed_login_security", bytes([0x04, CONV]) +
          framed(bhs(0x03, 0x80 | (0 << 2) | 1, lun=0x800000000001 << 16, itt=1, f20=(1 << 16), cmd_sn=1,
                     data=login_text + kv("AuthMethod=None"), immediate=True) + login_text + kv("AuthMethod=None")))
    # solicited data: InitialR2T=Yes, ImmediateData=No (profile 1), R2Ts answered by the harness (0x40)
    write("fuzz_iscsi_pdu", "r2t_answered", bytes([0x01 | 0x04 | 0x08 | 0x10 | 0x40, CONV]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x20, 2, rw10(0x2A, 4, 8), 4096, 0xA0),
                 scsi_cmd(0x21, 3, rw10(0x28, 4, 8), 4096, 0xC0)))
    # an explicit Data-Out after an R2T (TTT 1, the first the connection hands out)
    dout = bhs(0x05, 0x80, itt=0x20, f20=1, exp_stat_sn=3, rest=b"\0" * 4 + be32(0) + be32(0), data=block) + block
    write("fuzz_iscsi_pdu", "r2t_data_out", bytes([0x01 | 0x04 | 0x08 | 0x10, CONV]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x20, 2, rw10(0x2A, 4, 1), 512, 0xA0), dout))
    # unsolicited Data-Out (InitialR2T=No) after immediate data
    half = block[:256]
    unsol = bhs(0x05, 0x80, itt=0x30, f20=0xFFFFFFFF, rest=b"\0" * 4 + be32(0) + be32(256), data=half) + half
    write("fuzz_iscsi_pdu", "unsolicited_data_out", bytes([0x01 | 0x04 | 0x08, CONV]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x30, 2, rw10(0x2A, 4, 1), 512, 0x20, half), unsol))
    # an extended CDB in an AHS (RFC 7143 11.2.2.3): READ(32) on the PI type 2 LU
    c32 = cdb32(0x09, 1, 1, 0x20)
    ahs = be16(len(c32) - 16 + 1) + bytes([1, 0]) + c32[16:]
    ahs = pad(ahs)
    write("fuzz_iscsi_pdu", "ahs_extended_cdb", bytes([0x01 | 0x04 | 0x08, PI2]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x40, 2, c32, 4096 + 16, 0xC0, ahs=ahs)))
    # PERSISTENT RESERVE OUT REGISTER with immediate data, then a TransportID move
    pr = pr_out(0, sa_key=0xA1)
    write("fuzz_iscsi_pdu", "pr_out", bytes([0x01 | 0x04 | 0x08, CONV]) +
          framed(scsi_cmd(0x10, 1, tur), scsi_cmd(0x50, 2, pr[:10], 24, 0xA0, pr[10:]),
                 scsi_cmd(0x51, 3, cdb(0x5E, 0, 0, 0, 0, 0, 0, 0x10, 0, 0), 4096, 0xC0)))
    # discovery session (prelude 2): SendTargets=All, then Logout
    write("fuzz_iscsi_pdu", "discovery", bytes([0x02 | 0x04 | 0x08, CONV]) + framed(text_req, logout))
    # task management: ABORT TASK SET, LOGICAL UNIT RESET, TARGET WARM RESET
    write("fuzz_iscsi_pdu", "tmf", bytes([0x01 | 0x04 | 0x08, CONV]) +
          framed(scsi_cmd(0x10, 1, tur), bhs(0x02, 0x80 | 2, itt=0x60, f20=0xFFFFFFFF, immediate=True),
                 bhs(0x02, 0x80 | 5, itt=0x61, f20=0xFFFFFFFF, immediate=True),
                 bhs(0x02, 0x80 | 6, itt=0x62, f20=0xFFFFFFFF, immediate=True)))
    write("fuzz_iscsi_pdu", "snack_reject", bytes([0x01 | 0x04 | 0x08, CONV]) +
          framed(bhs(0x10, 0x80, itt=0x70), bhs(0x1C, 0x80, itt=0x71), scsi_cmd(0x72, 1, tur)))


def text_record(flags, text):
    return bytes([flags]) + be16(len(text)) + text


def iscsi_text_seeds():
    names = ("InitiatorName=iqn.2026-12.org.sbcemu:initiator", "TargetName=iqn.2026-12.org.sbcemu:fuzz")
    operational = kv("HeaderDigest=CRC32C,None", "DataDigest=None", "MaxRecvDataSegmentLength=512",
                     "MaxBurstLength=262144", "FirstBurstLength=65536", "InitialR2T=Yes", "ImmediateData=Yes",
                     "MaxOutstandingR2T=2", "DataPDUInOrder=Yes", "DataSequenceInOrder=Yes",
                     "ErrorRecoveryLevel=0", "DefaultTime2Wait=2", "DefaultTime2Retain=20",
                     "IFMarker=No", "OFMarker=No", "iSCSIProtocolLevel=1", "TaskReporting=RFC3720",
                     "X-com.example.key=1")
    write("fuzz_iscsi_text", "login_operational", bytes([0]) +
          text_record(0x87, kv(*names, "SessionType=Normal") + operational) +
          text_record(0x80, kv("SendTargets=All")) + text_record(0x81, b"") +
          text_record(0x80, kv("MaxRecvDataSegmentLength=4096", "InitiatorAlias=fuzz", "HeaderDigest=None")))
    write("fuzz_iscsi_text", "login_security_none", bytes([1 << 2]) +
          text_record(0x81, kv(*names, "AuthMethod=None")) + text_record(0x87, operational))
    write("fuzz_iscsi_text", "login_continued", bytes([2]) +
          text_record(0x44, kv(*names)) + text_record(0x87, kv("SessionType=Normal") + operational))
    chap_names = ("InitiatorName=iqn.2026-12.org.sbcemu:initiator", "TargetName=iqn.2026-12.org.sbcemu:chap")
    write("fuzz_iscsi_text", "login_chap_mutual", bytes([0]) +
          text_record(0x00, kv(*chap_names, "AuthMethod=CHAP,None")) + text_record(0x00, kv("CHAP_A=5")) +
          text_record(0x81, kv("CHAP_N=fuzz-initiator", "CHAP_R=@", "CHAP_I=7",
                               "CHAP_C=0x0123456789abcdef0123456789abcdef")) +
          text_record(0x87, operational) + text_record(0x80, kv("SendTargets=")))
    write("fuzz_iscsi_text", "login_chap_base64", bytes([0]) +
          text_record(0x00, kv(*chap_names, "AuthMethod=CHAP")) + text_record(0x00, kv("CHAP_A=7,5")) +
          text_record(0x81, kv("CHAP_N=fuzz-initiator", "CHAP_R=@", "CHAP_I=200",
                               "CHAP_C=0bASNFZ4mrze8BI0VniavN7w==")) + text_record(0x87, operational))
    write("fuzz_iscsi_text", "login_acl", bytes([0]) +
          text_record(0x00, kv("InitiatorName=iqn.2026-12.org.sbcemu:allowed", "TargetName=iqn.2026-12.org.sbcemu:acl",
                               "AuthMethod=CHAP")) + text_record(0x00, kv("CHAP_A=5")) +
          text_record(0x81, kv("CHAP_N=allowed", "CHAP_R=@")) + text_record(0x87, operational))
    write("fuzz_iscsi_text", "discovery", bytes([0]) +
          text_record(0x87, kv("InitiatorName=iqn.2026-12.org.sbcemu:initiator", "SessionType=Discovery",
                               "MaxRecvDataSegmentLength=512")) +
          text_record(0x80, kv("SendTargets=All")) + text_record(0x81, b"") + text_record(0x81, b"") +
          text_record(0x80, kv("SendTargets=iqn.2026-12.org.sbcemu:chap")) +
          text_record(0x80, kv("SendTargets=eui.0123456789abcdef")))


# ---- fuzz_config: INI \0 cfgstring \0 8-byte size ----

def config_seeds():
    files = [os.path.join(REPO, "config", "default.ini")]
    for d in ("tests/kernel/suites", "tests/conformance"):
        full = os.path.join(REPO, d)
        files += sorted(os.path.join(full, f) for f in os.listdir(full) if f.endswith(".ini"))
    for f in files:
        with open(f, "rb") as fh:
            write("fuzz_config", os.path.basename(os.path.dirname(f)) + "_" + os.path.basename(f), fh.read())
    with open(os.path.join(REPO, "tests", "kernel", "suites", "tcmu.ini"), "rb") as fh:
        tcmu = fh.read()
    write("fuzz_config", "cfgstring_zbc", tcmu + b"\0kind=zbc-hm;zone_size=256M;path=zbc0.img\0" + be64(2 << 30))
    write("fuzz_config", "cfgstring_template", tcmu + b"\0lu=zbc-faulty;path=faulty.img\0" + be64(64 << 20))
    write("fuzz_config", "cfgstring_pi", b"\0kind=conventional;protection_type=2;logical_block_size=4096;"
          b"p_i_exponent=1;pi_faults=guard 10;path=/srv/pi.img\0" + be64(1 << 30))
    write("fuzz_config", "cfgstring_zd", b"\0kind=zbc-zd;zone_size=64M;realm_zones=2;gap_zones=2;"
          b"sobr_zones=true;size=1G;path=zd.img\0")
    write("fuzz_config", "acl_chap", b"[daemon]\nstate_dir = /srv/sbcemu\nlisten = [::1]:3261\n"
          b"[target \"iqn.2026-12.org.example:t\"]\nchap_user = u\nchap_secret = 0123456789ab\n"
          b"mutual_user = t\nmutual_secret = ba9876543210\n"
          b"[acl \"iqn.2026-12.org.example:t\" \"iqn.2026-12.org.example:i\"]\nchap_user = i\n"
          b"chap_secret = abcdefabcdef\n[lun \"iqn.2026-12.org.example:t\" 0]\npath = l0.img\nsize = 1G\n"
          b"offline_zones = 3, 7-9\nvolatile_write_cache = true\n")


# ---- fuzz_tcmu_ring: flags, second cmd_head, the map ----

MB_SIZE = 128       # sizeof(struct tcmu_mailbox)
ENTRY_SIZE = 112    # sizeof(struct tcmu_cmd_entry)
IOV_OFF = 48        # offsetof(struct tcmu_cmd_entry, req.iov)
TMR_SIZE = 32       # sizeof(struct tcmu_tmr_entry)
OP_PAD, OP_CMD, OP_TMR = 0, 1, 2


def align8(n):
    return (n + 7) & ~7


def tcmu_map(cmds, cmdr_size=2048, data_blocks=4, block=1024, flags=0x7, tmr=None, pad_at_end=False):
    """cmds: list of (cdb, [(data offset in the data area, length)]) queued from cmd_head 0."""
    data_off = ((MB_SIZE + cmdr_size + block - 1) // block) * block
    m = bytearray(data_off + data_blocks * block)
    ring = bytearray(cmdr_size)
    off = 0
    for i, (c, iovs) in enumerate(cmds):
        base = max(IOV_OFF + 16 * len(iovs), ENTRY_SIZE)
        size = align8(base + len(c))
        e = bytearray(size)
        struct.pack_into("<IHBB", e, 0, size | OP_CMD, i + 1, 0, 0)
        struct.pack_into("<IIIQ", e, 8, len(iovs), 0, 0, 0)
        struct.pack_into("<Q", e, 24, MB_SIZE + off + base)
        for j, (o, ln) in enumerate(iovs):
            struct.pack_into("<QQ", e, IOV_OFF + 16 * j, data_off + o, ln)
        e[base:base + len(c)] = c
        ring[off:off + size] = e
        off += size
    if tmr:
        size = align8(TMR_SIZE + 2 * len(tmr[1]))
        e = bytearray(size)
        struct.pack_into("<IHBB", e, 0, size | OP_TMR, 0, 0, 0)
        e[8] = tmr[0]
        struct.pack_into("<I", e, 12, len(tmr[1]))
        for j, cid in enumerate(tmr[1]):
            struct.pack_into("<H", e, TMR_SIZE + 2 * j, cid)
        ring[off:off + size] = e
        off += size
    head, tail = off, 0
    if pad_at_end:
        # the handler's cursor (cmd_tail) near the end, a PAD entry there, the entries from 0: a wrap
        tail = cmdr_size - 64
        struct.pack_into("<IHBB", ring, tail, 64 | OP_PAD, 0, 0, 0)
    struct.pack_into("<HHIII", m, 0, 2, flags, MB_SIZE, cmdr_size, head)
    struct.pack_into("<I", m, 64, tail)
    m[MB_SIZE:MB_SIZE + cmdr_size] = ring
    # data for the writes: a recognisable pattern
    m[data_off:data_off + block] = (bytes(range(256)) * (block // 256))
    return bytes(m), head


def tcmu_seeds():
    cmds = [(cdb(0x12, 0, 0, 0, 0xFF, 0), [(block_off, 255)]) for block_off in (2048,)]
    cmds.append((rw10(0x2A, 1, 1), [(0, 512)]))
    cmds.append((rw10(0x28, 1, 1), [(1024, 512)]))
    cmds.append((cdb(0x9E, 0x10, *([0] * 8), 0, 0, 0, 32, 0, 0), [(3072, 32)]))
    m, head = tcmu_map(cmds)
    for variant in (CONV, PI1, HM):
        write("fuzz_tcmu_ring", "device_cmds_v%d" % variant, bytes([1 | (variant << 2)]) + struct.pack("<I", head) + m)
    write("fuzz_tcmu_ring", "ring_cmds", bytes([0]) + struct.pack("<I", head) + m)
    write("fuzz_tcmu_ring", "ring_cmds_ooo", bytes([2]) + struct.pack("<I", head) + m)
    m, head = tcmu_map(cmds[:2], tmr=(1, [1, 2]))
    write("fuzz_tcmu_ring", "ring_tmr", bytes([0]) + struct.pack("<I", head) + m)
    write("fuzz_tcmu_ring", "device_tmr", bytes([1]) + struct.pack("<I", head) + m)
    m, head = tcmu_map(cmds[:1], tmr=(5, []))
    write("fuzz_tcmu_ring", "device_lun_reset", bytes([1]) + struct.pack("<I", head) + m)
    # a command split over two iovecs, and a PAD to the ring's end with cmd_head wrapped to 0
    m, head = tcmu_map([(rw10(0x2A, 2, 2), [(0, 512), (2048, 512)])], cmdr_size=1024, pad_at_end=True)
    write("fuzz_tcmu_ring", "device_two_iovecs_pad", bytes([1]) + struct.pack("<I", head) + m)
    write("fuzz_tcmu_ring", "ring_two_iovecs_pad", bytes([0]) + struct.pack("<I", head) + m)
    # a restart: commands left in the ring go through the simulated reset_ring
    m, head = tcmu_map(cmds)
    write("fuzz_tcmu_ring", "device_restart", bytes([1 | 0x20]) + struct.pack("<I", head) + m)


# ---- dictionaries (libFuzzer -dict): tokens the harness's parser compares against ----

def dict_line(tok):
    esc = "".join("\\x%02x" % b if b < 0x20 or b > 0x7e or b in (0x22, 0x5c) else chr(b) for b in tok.encode())
    return '"%s"\n' % esc


def dictionaries():
    import re
    d = os.path.join(HERE, "..", "dict")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(REPO, "docs", "config.md")) as f:
        doc = f.read()
    toks = set(re.findall(r"^\| `([a-z0-9_]+)` \|", doc, re.M))
    toks |= set(re.findall(r"`([a-z0-9-]+)`", doc))
    toks |= {"[daemon]", "[iscsi]", "[tcmu]", "[target \"", "[acl \"", "[lun \"", "[lu \"", " = ", "\" 0]",
             "iqn.2026-12.org.example:t", "true", "false", "4K", "1G", "64M", "0x", ";", "lu=", "kind=", "path=",
             "guard ", "app ", "ref ", "-", ", "}
    with open(os.path.join(d, "fuzz_config.dict"), "w") as f:
        for t in sorted(toks):
            f.write(dict_line(t))
    keys = ["HeaderDigest", "DataDigest", "MaxConnections", "TargetName", "InitiatorName", "TargetAlias",
            "InitiatorAlias", "TargetAddress", "TargetPortalGroupTag", "InitialR2T", "ImmediateData",
            "MaxRecvDataSegmentLength", "MaxBurstLength", "FirstBurstLength", "DefaultTime2Wait",
            "DefaultTime2Retain", "MaxOutstandingR2T", "DataPDUInOrder", "DataSequenceInOrder",
            "ErrorRecoveryLevel", "SessionType", "IFMarker", "OFMarker", "IFMarkInt", "OFMarkInt",
            "iSCSIProtocolLevel", "TaskReporting", "AuthMethod", "CHAP_A", "CHAP_I", "CHAP_C", "CHAP_N",
            "CHAP_R", "SendTargets"]
    values = ["None", "CRC32C", "Yes", "No", "Normal", "Discovery", "CHAP", "All", "Reject", "Irrelevant",
              "RFC3720", "0x", "0b", "=", "\0", "CHAP_R=@", "fuzz-initiator", "allowed",
              "iqn.2026-12.org.sbcemu:fuzz", "iqn.2026-12.org.sbcemu:chap", "iqn.2026-12.org.sbcemu:acl",
              "iqn.2026-12.org.sbcemu:initiator", "iqn.2026-12.org.sbcemu:allowed", "eui.", "naa.", "X-", "X#"]
    with open(os.path.join(d, "fuzz_iscsi_text.dict"), "w") as f:
        for t in keys + [k + "=" for k in keys] + values:
            f.write(dict_line(t))
    with open(os.path.join(d, "fuzz_scsi_cdb.dict"), "w") as f:
        f.write(dict_line("#NEXT#"))


def control_seeds():
    """Request lines of docs/control.md, one session per seed."""
    seeds = {
        "introspection": ['{"command":"status"}', '{"command":"targets"}', '{"command":"lus"}',
                          '{"command":"sessions"}', '{"command":"fault-list"}'],
        "lu_changes": ['{"command":"lu-state","lun":0,"state":"offline"}',
                       '{"command":"lu-state","lun":0,"state":"ready"}',
                       '{"command":"lu-write-protect","lun":0,"enable":true}',
                       '{"command":"lu-resize","lun":0,"bytes":131072}',
                       '{"command":"lu-resize","lun":0,"blocks":100,"force":true}',
                       '{"command":"lu-add","lun":5,"cfgstring":"kind=zbc-hm;size=64M;zone_size=8M;path=x.img"}',
                       '{"command":"lu-remove","lun":5}'],
        "fault_rules": ['{"command":"fault-add","lun":0,"action":"sense","opcodes":[40,136],"lba_first":10,'
                        '"lba_last":19,"sense_key":3,"asc":17,"ascq":0,"count":1}',
                        '{"command":"fault-add","lun":0,"action":"medium-error","lba_first":5,"lba_last":8}',
                        '{"command":"fault-add","lun":0,"action":"delay","delay_ms":10,"every":2,'
                        '"probability":0.5,"seed":7}',
                        '{"command":"fault-add","lun":0,"action":"hold","initiator":"iqn","service_action":16}',
                        '{"command":"fault-add","lun":0,"action":"status","status":8}',
                        '{"command":"fault-add","lun":0,"action":"corrupt-read","every":3}',
                        '{"command":"fault-add","lun":0,"action":"short-read","count":2}',
                        '{"command":"fault-add","lun":0,"action":"tear-atomic","blocks":2}',
                        '{"command":"fault-add","lun":0,"action":"zone-offline","zone":1}',
                        '{"command":"fault-list"}', '{"command":"fault-remove","id":2}',
                        '{"command":"fault-remove","all":true}'],
        "conglomerate": ['{"command":"subsidiaries","lun":6}',
                         '{"command":"subsidiary-create","lun":6,"elements":"10-12, 20"}',
                         '{"command":"subsidiary-bind","lun":6,"elements":"10-11","initiator":"*"}',
                         '{"command":"subsidiary-bind","lun":6,"elements":"12","initiator":"iqn.2026-12.org.x:h1"}',
                         '{"command":"subsidiary-unbind","lun":6,"elements":"10","initiator":"*"}',
                         '{"command":"subsidiary-destroy","lun":6,"elements":"10, 20"}',
                         '{"command":"subsidiary-create","lun":6,"elements":"70000"}',
                         '{"command":"lu-state","lun":65542,"state":"offline"}', '{"command":"save"}'],
        "refused": ['{"command":"lu-state","lun":7,"state":"ready"}', '{"command":"bogus"}', '{"command":1}',
                    '[1,2]', '{"command":"status","x":1}', '{"command":"lu-resize","lun":0,"bytes":100}',
                    '{"command":"fault-add","lun":0,"action":"sense","sense_key":0,"asc":0,"ascq":0}', '{'],
    }
    for name, lines in seeds.items():
        write("fuzz_control", name, "\n".join(lines).encode())


def main():
    for h in ("fuzz_scsi_cdb", "fuzz_iscsi_pdu", "fuzz_iscsi_text", "fuzz_config", "fuzz_tcmu_ring", "fuzz_control"):
        d = os.path.join(HERE, h)
        if os.path.isdir(d):
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
    scsi_seeds()
    iscsi_seeds()
    iscsi_text_seeds()
    config_seeds()
    tcmu_seeds()
    control_seeds()
    dictionaries()
    return 0


if __name__ == "__main__":
    sys.exit(main())
