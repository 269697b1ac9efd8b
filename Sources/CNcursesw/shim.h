// ncursesw for Swift 6. NCURSES_WIDECHAR must be 1 before the header (SwiftPM drops pkg-config's
// -D_XOPEN_SOURCE), or the wide-character API is invisible. Macros and C globals that Swift cannot
// import, or that Swift 6 rejects as shared mutable state, are wrapped in static inline functions.
#ifndef REITERATE_NCURSES_SHIM_H
#define REITERATE_NCURSES_SHIM_H

#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <string.h>
#include <wchar.h>
#include <ncursesw/curses.h>

static inline WINDOW *shim_stdscr(void) { return stdscr; }
static inline int shim_lines(void) { return LINES; }
static inline int shim_cols(void) { return COLS; }
static inline int shim_colors(void) { return COLORS; }

static inline attr_t shim_a_normal(void) { return A_NORMAL; }
static inline attr_t shim_a_bold(void) { return A_BOLD; }
static inline attr_t shim_a_reverse(void) { return A_REVERSE; }
static inline attr_t shim_a_dim(void) { return A_DIM; }
static inline attr_t shim_a_underline(void) { return A_UNDERLINE; }
static inline attr_t shim_color_pair(short n) { return (attr_t)COLOR_PAIR(n); }

static inline int shim_key_code_yes(void) { return KEY_CODE_YES; }
#include <langinfo.h>
/// The user's locale; when its character set is not UTF-8 (LANG unset: the C locale), C.UTF-8 for
/// the character type, so wide characters and box drawing still work.
static inline int shim_set_locale(void) {
    setlocale(LC_ALL, "");
    const char *codeset = nl_langinfo(CODESET);
    if (codeset == NULL || strcmp(codeset, "UTF-8") != 0) {
        return setlocale(LC_CTYPE, "C.UTF-8") != NULL;
    }
    return 1;
}

/// Reads one key without blocking: 0 none, 1 a character in *ch, 2 a key code in *ch.
static inline int shim_read_key(int *ch) {
    wint_t w = 0;
    int r = wget_wch(stdscr, &w);
    if (r == ERR) return 0;
    *ch = (int)w;
    return r == KEY_CODE_YES ? 2 : 1;
}

/// Writes a wide string at (y, x) with attributes; errors (the bottom-right cell) are ignored.
static inline void shim_put(int y, int x, const wchar_t *text, attr_t attrs) {
    wattrset(stdscr, attrs);
    mvwaddwstr(stdscr, y, x, text);
}
#include <signal.h>
#include <string.h>

/// Mouse reporting on or off: left button presses and the wheel (buttons 4 and 5), no click delay.
static inline void shim_mouse(int on) {
    mousemask(on ? (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED) : 0, NULL);
    mouseinterval(0);
}

/// The mouse event behind a KEY_MOUSE: 1 a left press or click, 2 wheel up, 3 wheel down, 0 other.
static inline int shim_read_mouse(int *x, int *y) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    *x = event.x;
    *y = event.y;
    if (event.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
    if (event.bstate & BUTTON4_PRESSED) return 2;
    if (event.bstate & BUTTON5_PRESSED) return 3;
    return 0;
}

/// On a crash (a Swift trap is SIGILL/SIGTRAP; also SEGV, BUS, ABRT, FPE) give the terminal back
/// before the default action, so the shell is usable and the crash message readable.
static void shim_crash_handler(int sig) {
    endwin();
    signal(sig, SIG_DFL);
    raise(sig);
}

static inline void shim_restore_terminal_on_crash(void) {
    int signals[] = { SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE };
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = shim_crash_handler;
        action.sa_flags = SA_RESETHAND;
        sigaction(signals[i], &action, NULL);
    }
}
#endif
