import ProxyWire

/// What a reader made of some bytes: its events in order, the refusal that ended it (if any), and the
/// bytes a CONNECT left over.
struct Outcome: Equatable, CustomStringConvertible {
    var events: [WireEvent] = []
    var refusal: WireRefusal?
    var remaining: [UInt8] = []
    var buffered = 0

    var description: String { "\(events.count) events, refusal \(refusal.map { "\($0)" } ?? "none"), \(remaining.count) bytes remaining" }

    /// The `.request` events' heads and bodies.
    var requests: [(head: RequestHead, body: [UInt8])] {
        events.compactMap { if case .request(let head, let body) = $0 { (head, body) } else { nil } }
    }
}

/// The lines joined with CRLF: `wire("GET / HTTP/1.1", "Host: a", "", "")` is a whole head.
func wire(_ lines: String...) -> String { wire(lines) }

func wire(_ lines: [String]) -> String { lines.joined(separator: "\r\n") }

/// Feeds `bytes` cut at `cuts` (offsets), draining the reader after each piece as the proxy does.
func feed(_ bytes: [UInt8], limits: WireLimits = WireLimits(), cuts: [Int] = []) -> Outcome {
    var reader = RequestReader(limits: limits)
    var outcome = Outcome()
    var from = 0
    for cut in cuts.filter({ $0 > 0 && $0 < bytes.count }).sorted() + [bytes.count] where cut >= from {
        reader.append(bytes[from..<cut])
        from = cut
        do {
            while let event = try reader.next() { outcome.events.append(event) }
        } catch {
            outcome.refusal = error
            break
        }
    }
    outcome.remaining = reader.takeRemaining()
    outcome.buffered = reader.buffered
    return outcome
}

func feed(_ text: String, limits: WireLimits = WireLimits(), cuts: [Int] = []) -> Outcome {
    feed(Array(text.utf8), limits: limits, cuts: cuts)
}

/// The refusal the text meets, fed whole.
func refusal(_ text: String, limits: WireLimits = WireLimits()) -> WireRefusal? { feed(text, limits: limits).refusal }

/// The one request the text makes, fed whole.
func onlyRequest(_ text: String, limits: WireLimits = WireLimits()) -> (head: RequestHead, body: [UInt8])? {
    let outcome = feed(text, limits: limits)
    return outcome.refusal == nil && outcome.requests.count == 1 ? outcome.requests[0] : nil
}
