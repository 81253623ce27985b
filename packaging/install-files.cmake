# Runs at install time (cmake --install, cpack): the files that name the installation's own paths,
# which only then are known (cmake --install --prefix), and the Grafana dashboard. With the prefix
# /usr the configuration goes to /etc, else under the prefix (where `outboard run` and the unit
# look for it).
# Set by the caller: OUTBOARD_TEMPLATES (this directory), OUTBOARD_OPENCL_SONAME.
set(OUTBOARD_PREFIX "${CMAKE_INSTALL_PREFIX}")
if(OUTBOARD_PREFIX STREQUAL "/usr")
  set(OUTBOARD_ETC "/etc")
else()
  set(OUTBOARD_ETC "${OUTBOARD_PREFIX}/etc")
endif()
set(root "$ENV{DESTDIR}")

# configure_file TEMPLATE into $DESTDIR/DESTINATION with MODE; an existing file that differs and
# that `keep` asks to keep (an administrator's edits) stays, the new one goes beside it as .new.
function(outboard_put template destination mode keep)
  set(target "${root}${destination}")
  get_filename_component(dir "${target}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  set(staged "${target}.installing")
  configure_file("${OUTBOARD_TEMPLATES}/${template}" "${staged}" @ONLY)
  if(keep AND EXISTS "${target}")
    file(READ "${target}" old)
    file(READ "${staged}" new)
    if(NOT old STREQUAL new)
      set(target "${target}.new")
      message(STATUS "Keeping: ${root}${destination} (changed here); the shipped one is ${target}")
    endif()
  endif()
  file(RENAME "${staged}" "${target}")
  file(CHMOD "${target}" PERMISSIONS ${mode})
  message(STATUS "Installing: ${target}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${target}")
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
endfunction()

set(rw_r_r OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
set(rwx_rx_rx OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
outboard_put(outboard.toml.in "${OUTBOARD_ETC}/outboard/outboard.toml" "${rw_r_r}" TRUE)
outboard_put(outboard.service.in "${OUTBOARD_PREFIX}/lib/systemd/system/outboard.service" "${rw_r_r}" FALSE)
outboard_put(service-setup.in "${OUTBOARD_PREFIX}/lib/outboard/service-setup" "${rwx_rx_rx}" FALSE)
# The OpenCL ICD's registration names the installed library by its full path.
set(OUTBOARD_OPENCL_LIBRARY "${OUTBOARD_PREFIX}/lib/${OUTBOARD_OPENCL_SONAME}")
outboard_put(outboard.icd.in "${OUTBOARD_ETC}/OpenCL/vendors/outboard.icd" "${rw_r_r}" FALSE)
# The Grafana dashboard of the metrics endpoint (docs/servers.md, Metrics), copied as it is.
file(INSTALL "${OUTBOARD_TEMPLATES}/grafana/outboard-dashboard.json" DESTINATION "${OUTBOARD_PREFIX}/share/outboard/grafana"
     FILE_PERMISSIONS ${rw_r_r})
