import Foundation

/// `make bench`'s view into the first frame: with REITERATE_STARTUP_TRACE=FILE set, each step of the
/// way to the first frame appends "step nanoseconds" (CLOCK_MONOTONIC, the clock the bench reads too)
/// to FILE. Unset, a mark costs one check of a value read once.
public enum StartupTrace {
    private static let path: String? = ProcessInfo.processInfo.environment["REITERATE_STARTUP_TRACE"].flatMap { $0.isEmpty ? nil : $0 }

    public static func mark(_ step: StaticString) {
        guard let path else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let line = "\(step) \(Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))\n"
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }
}
