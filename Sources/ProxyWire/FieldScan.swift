/// Finds the end of a head or of a chunked body's trailer section (the empty line), a byte at a time
/// across calls: it remembers where it stopped, so bytes arriving in pieces are each looked at once.
/// Every LF must follow a CR; the section is bounded in bytes (and, for a head, in lines).
struct FieldScan: Sendable, Equatable {
    enum Section: Sendable { case head, trailers }

    enum Outcome: Sendable, Equatable {
        case more
        /// The section's length, its empty line included.
        case end(Int)
        case refused(WireRefusal)
    }

    let section: Section
    /// Offsets from the section's first byte.
    private(set) var scanned = 0
    private var lineStart = 0
    private var lines = 0
    /// Where the request line starts, past the empty lines a client may send before it.
    private(set) var firstLine = 0

    init(_ section: Section) { self.section = section }

    /// Goes on over `bytes` (the section's bytes so far, from its first).
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, limits: WireLimits) -> Outcome {
        let stop = min(bytes.count, limits.maxHeadBytes)
        var i = scanned
        defer { scanned = i }
        while i < stop {
            guard bytes[i] == ASCII.lf else {
                i += 1
                continue
            }
            guard i > lineStart, bytes[i - 1] == ASCII.cr else { return .refused(bareLineFeed) }
            if i - 1 == lineStart {
                guard section == .head, lines == 0 else {
                    i += 1
                    return .end(i)
                }
                firstLine = i + 1  // an empty line before the request line
            } else {
                lines += 1
                if section == .head, lines - 1 > limits.maxHeaderCount { return .refused(.tooManyHeaders) }
            }
            i += 1
            lineStart = i
        }
        return i >= limits.maxHeadBytes ? .refused(section == .head ? .headTooLarge : .trailersTooLarge) : .more
    }

    /// What a line ending in LF alone makes: the line it is in decides the words.
    private var bareLineFeed: WireRefusal {
        switch section {
        case .head: lines == 0 ? .malformedRequestLine : .malformedHeader
        case .trailers: .badChunk
        }
    }
}
