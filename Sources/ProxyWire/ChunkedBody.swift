/// Where a chunked body's reading stands (RFC 9112 §7.1).
enum ChunkState: Sendable, Equatable {
    /// A chunk-size line; `scanned` bytes of it looked at already.
    case size(scanned: Int)
    /// A chunk's data, `left` bytes of it still to come.
    case data(left: Int)
    /// The CRLF after a chunk's data.
    case dataEnd
    /// The trailer section after the last chunk, up to its empty line.
    case trailers(FieldScan)
}

extension RequestReader {
    /// Reads as much of a chunked body as the bytes held allow, de-chunking into `decoded` and consuming
    /// what it read. True once the body and its trailers are complete.
    mutating func readChunks(_ state: inout ChunkState) throws(WireRefusal) -> Bool {
        while true {
            switch state {
            case .size(let scanned):
                guard let size = try chunkSize(scanned: scanned, state: &state) else { return false }
                if size == 0 {
                    state = .trailers(FieldScan(.trailers))
                } else {
                    if size > limits.maxBodyBytes - decoded.count { throw .bodyTooLarge }
                    state = .data(left: size)
                }
            case .data(let left):
                let take = min(left, buffer.count - start)
                guard take > 0 else { return false }
                decoded.append(contentsOf: buffer[start..<(start + take)])
                start += take
                guard take == left else {
                    state = .data(left: left - take)
                    return false
                }
                state = .dataEnd
            case .dataEnd:
                guard buffer.count - start >= 2 else { return false }
                guard buffer[start] == ASCII.cr, buffer[start + 1] == ASCII.lf else { throw .badChunk }
                start += 2
                state = .size(scanned: 0)
            case .trailers(var scan):
                let outcome = buffer.withUnsafeBufferPointer { scan.scan(UnsafeBufferPointer(rebasing: $0[start...]), limits: limits) }
                switch outcome {
                case .more:
                    state = .trailers(scan)
                    return false
                case .refused(let refusal):
                    throw refusal
                case .end(let length):
                    try checkTrailers(length)
                    start += length
                    return true
                }
            }
        }
    }

    /// The size on a whole chunk-size line (the line consumed), or nil while the line is not whole yet.
    /// `1*HEXDIG [ BWS ";" extensions ] CRLF`, the line no longer than `maxChunkLineBytes`.
    private mutating func chunkSize(scanned: Int, state: inout ChunkState) throws(WireRefusal) -> Int? {
        let available = buffer.count - start
        let stop = min(available, limits.maxChunkLineBytes)
        guard let lf = buffer[(start + scanned)..<(start + stop)].firstIndex(of: ASCII.lf) else {
            if stop >= limits.maxChunkLineBytes { throw .badChunk }
            state = .size(scanned: stop)
            return nil
        }
        guard lf > start, buffer[lf - 1] == ASCII.cr else { throw .badChunk }
        var i = start
        var size = 0
        while i < lf - 1, let digit = ASCII.hexValue(buffer[i]) {
            let (times16, o1) = size.multipliedReportingOverflow(by: 16)
            if o1 { throw .badChunk }
            size = times16 + digit
            i += 1
        }
        guard i > start else { throw .badChunk }
        let cr = lf - 1
        if i < cr {
            // Extensions are ignored, but must follow `;` and hold no controls (a bare CR above all).
            while i < cr, ASCII.isWhitespace(buffer[i]) { i += 1 }
            guard i < cr, buffer[i] == ASCII.semicolon, buffer[(i + 1)..<cr].allSatisfy(ASCII.isFieldValueByte) else {
                throw .badChunk
            }
        }
        start = lf + 1
        return size
    }

    /// Trailer lines are dropped, but only once they read one way.
    private func checkTrailers(_ length: Int) throws(WireRefusal) {
        let result: WireRefusal? = buffer.withUnsafeBufferPointer { whole in
            let p = UnsafeBufferPointer(rebasing: whole[start..<(start + length)])
            var lineStart = 0
            while lineStart < p.count - 2 {
                let lineEnd = HeadParser.lineEnd(p, from: lineStart)
                do throws(WireRefusal) {
                    _ = try HeadParser.fieldRanges(UnsafeBufferPointer(rebasing: p[lineStart..<lineEnd]))
                } catch {
                    return error
                }
                lineStart = lineEnd + 2
            }
            return nil
        }
        if let result { throw result }
    }
}
