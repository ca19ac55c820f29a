# Sourced by the embedding benchmarks (embed.sh, many-constants.sh): the Cargo.toml of a
# scratch package outside the workspace.
#
# scratch_manifest NAME DIR REPO DEPS [PROFILE_LINE]
#   DEPS: "ours" adds webnn-weights-runtime and, for build.rs, webnn-weights-build from REPO;
#   "build" only webnn-weights-build, for build.rs; anything else adds no dependency.
#   PROFILE_LINE, if given, goes into [profile.release] (e.g. 'codegen-units = 1'). The package's Cargo.lock is REPO's, so the build is offline
#   and uses the same dependency versions.
scratch_manifest() {
  local name=$1 dir=$2 repo=$3 deps=$4 profile=${5:-}
  mkdir -p "$dir/src"
  cp "$repo/Cargo.lock" "$dir/Cargo.lock"
  {
    echo "[package]"
    echo "name = \"$name\""
    echo 'version = "0.0.0"'
    echo 'edition = "2021"'
    echo 'publish = false'
    echo
    echo '[workspace]'
    echo
    echo '[profile.release]'
    echo 'debug = false'
    if [ -n "$profile" ]; then
      echo "$profile"
    fi
    if [ "$deps" = ours ]; then
      echo
      echo '[dependencies]'
      echo "webnn-weights-runtime = { path = \"$repo/weights-runtime\" }"
    fi
    if [ "$deps" = ours ] || [ "$deps" = build ]; then
      echo
      echo '[build-dependencies]'
      echo "webnn-weights-build = { path = \"$repo/weights-build\" }"
    fi
  } > "$dir/Cargo.toml"
}
