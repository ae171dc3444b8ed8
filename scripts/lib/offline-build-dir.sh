# The --kokkos option of scripts/build-offline.sh and scripts/gpu-run.sh, in one place: a release
# version such as 4.6.01 (the bundle's second Kokkos, packed by bundle.sh --kokkos-tarball), and
# the build directory named after the backend and that release. Sourced; the caller defines
# usage_error (message; exits 2).

# offline_build_dir ROOT BACKEND RELEASE: checks RELEASE (empty: Debian's 3.4.01) and sets BUILD,
# unless the caller set it (--build-dir), to ROOT/build-offline-BACKEND[-kokkos-RELEASE].
offline_build_dir() {
  [ -z "$3" ] || [[ "$3" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
    || usage_error "--kokkos wants a release version such as 4.6.01, not '$3'"
  BUILD=${BUILD:-$1/build-offline-$2${3:+-kokkos-$3}}
}
