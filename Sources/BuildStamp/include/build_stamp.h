#ifndef REITERATE_BUILD_STAMP_H
#define REITERATE_BUILD_STAMP_H

/// The commit a release was built from, written into the binary after linking by
/// scripts/stamp-build.py (`make release`): the bytes after the marker
/// "reiterate-build-stamp:" up to the first NUL. Unstamped builds keep the word "unstamped".
const char *reiterate_build_stamp(void);

#endif
