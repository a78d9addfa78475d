/*
 * A layering probe (tests/layering/CMakeLists.txt): this file compiled as part
 * of one layer, including PROBE_HEADER.  The probes that break a layering
 * rule must fail to compile; the control probes must compile.
 */
#ifdef PROBE_HEADER
#include PROBE_HEADER
#endif

int sbce_layering_probe(void);

int sbce_layering_probe(void)
{
	return 0;
}
