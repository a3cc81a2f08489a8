#!/bin/sh
# Issue 26's "Done when" measurements, written into this directory by docs/bench/issue26.sh (the
# one script every dated run of them used). Run from the repository root: sh <this file>
exec sh "$(dirname "$0")/../issue26.sh" "$(dirname "$0")"
