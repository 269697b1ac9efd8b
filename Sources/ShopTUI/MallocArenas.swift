import Foundation

/// glibc's malloc gives each thread that contends for it an arena of its own, and each keeps freed
/// memory apart: the TUI (a main thread, SwiftNIO's loop, dispatch's workers) held ~1.3 MiB more
/// resident for it after a long browse (`make bench`, the RSS row). It is I/O-bound, so one arena
/// costs no speed. `mallopt` is not in Swift's Glibc module: it is looked up by name.
public enum MallocArenas {
    public static func limit(to count: Int32) {
        #if canImport(Glibc)
        typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
        let mArenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: MallOpt.self)(mArenaMax, count)
        #endif
    }
}
