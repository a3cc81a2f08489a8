#!/bin/sh
# Issue 26's command from the clone (node src/cli/bin.js: the sources through tsx), at the same
# commit as docs/bench/2026-11-27-dist/.
exec sh docs/bench/issue26.sh docs/bench/2026-11-27-clone
