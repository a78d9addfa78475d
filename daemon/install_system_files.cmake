# Run by `cmake --install` (daemon/CMakeLists.txt sets sbce_src, sbce_bin, sbce_unit_dir and
# sbce_sbindir before it), so that the prefix given to `cmake --install --prefix` decides, not the
# one the build was configured with (docs/packaging.md):
# - the configuration goes to /etc for the prefixes /usr and / (as GNUInstallDirs' FULL_SYSCONFDIR
#   has it), else to PREFIX/etc;
# - the units to /lib/systemd/system for /usr (Debian 12's systemdsystemunitdir), else to
#   PREFIX/lib/systemd/system, unless SBCEMU_SYSTEMD_UNIT_DIR says; their ExecStart names the
#   sbcemud this installation puts in place.
# file(INSTALL) puts $DESTDIR in front of every destination.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr" OR CMAKE_INSTALL_PREFIX STREQUAL "/")
  set(sbce_etc /etc)
else()
  set(sbce_etc ${CMAKE_INSTALL_PREFIX}/etc)
endif()
if(NOT sbce_unit_dir)
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(sbce_unit_dir /lib/systemd/system)
  else()
    set(sbce_unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
  endif()
endif()
if(IS_ABSOLUTE "${sbce_sbindir}")
  set(SBINDIR ${sbce_sbindir})
else()
  string(REGEX REPLACE "/$" "" SBINDIR "${CMAKE_INSTALL_PREFIX}/${sbce_sbindir}")
endif()
foreach(unit sbcemu.service sbcemu@.service)
  configure_file(${sbce_src}/systemd/${unit}.in ${sbce_bin}/${unit} @ONLY)
endforeach()
file(INSTALL ${sbce_bin}/sbcemu.service ${sbce_bin}/sbcemu@.service DESTINATION ${sbce_unit_dir})
file(INSTALL ${sbce_src}/../config/default.ini DESTINATION ${sbce_etc}/sbcemu RENAME sbcemu.ini)
