# `cmake --install` puts the three programs side by side in bin/ (the GUI finds the worker next to
# itself), plus the desktop file, MIME type, icon and example sessions. `cpack -G DEB` makes a
# Debian package of that install; its dependencies come from the binaries' shared libraries
# (dpkg-shlibdeps), so `apt install ./tunebench_*.deb` pulls exactly Qt, QCustomPlot, SQLiteCpp and
# libtorch as built against.
set(CPACK_PACKAGE_NAME tunebench)
set(CPACK_PACKAGE_VENDOR "Tunebench")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Workbench for tuning distributed deep-learning training")
set(CPACK_PACKAGE_DESCRIPTION
    "Runs short instrumented libtorch training trials (single GPU, DDP, FSDP) in worker processes, plots every rank's step phases live, stores trials in session files and compares them.")
set(CPACK_PACKAGE_CONTACT "Tunebench maintainers <maintainers@tunebench.invalid>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
# Debian's libtorch runs 4x slower on the CPU with the reference BLAS it would otherwise pick.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssh-client")
include(CPack)
