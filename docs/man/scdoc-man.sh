#!/bin/sh
# SPDX-License-Identifier: MIT
#
# docs/man/scdoc-man.sh SCDOC INPUT OUTPUT: builds a man page with scdoc,
# then adds ".nh" and ".cflags 0 -" after .TH (which would re-enable
# hyphenation): no hyphenation, and no line break after the hyphens of
# "--option-names", which people copy from the page.
set -eu
"$1" <"$2" >"$3.tmp"
sed '/^\.TH /a .nh\n.cflags 0 -' "$3.tmp" >"$3.tmp2"
grep -q '^\.cflags 0 -$' "$3.tmp2"
rm -f "$3.tmp"
mv "$3.tmp2" "$3"
