#!/bin/sh
# Issue 26's command on the compiled package (npm run build first), at the session's last commit.
CCLAB="node dist/src/cli/cclab.js" exec sh docs/bench/issue26.sh docs/bench/2026-11-27-head
