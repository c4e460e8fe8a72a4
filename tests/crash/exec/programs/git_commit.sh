#!/bin/sh
# A commit as git makes one: each new object written to a temporary file, fsynced and linked to its name (the
# temporary name then unlinked), the branch's lock file fsynced and renamed over the branch. `setup REPO`
# makes a repository of one commit ("first") and changes its file; the program is then
# `git -C REPO -c core.fsync=all commit -a -m second`. `check GITDIR` exits 1 unless `git fsck` passes on the
# crash image GITDIR and, at the crash point of git's exit (PMLAB_CRASH_AT_EXIT=1), HEAD is "second".
set -u
case "$1" in
setup)
  rm -rf "$2" && git init -q "$2" && cd "$2" || exit 1
  git config user.name pmlab && git config user.email pmlab@localhost
  echo one >f && git add f && git commit -q -m first && echo two >f
  ;;
check)
  out=$(git --git-dir="$2" fsck --no-progress 2>&1) || { echo "fsck: $out" | head -3; exit 1; }
  subject=$(git --git-dir="$2" log -1 --format=%s 2>&1) || { echo "no HEAD: $subject"; exit 1; }
  if [ "${PMLAB_CRASH_AT_EXIT:-0}" = 1 ] && [ "$subject" != second ]; then
    echo "HEAD is the commit \"$subject\" after git commit returned"
    exit 1
  fi
  ;;
*) exit 2 ;;
esac
