#!/bin/sh
# Lints the files of a change.
exec acme-lint "$@"
