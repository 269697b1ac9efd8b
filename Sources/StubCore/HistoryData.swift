/// The seeded users and their cheer histories.
///
/// A history is a list indexed from 0 (newest). Alice's is generated once and held (about 230 entries);
/// the whale's is virtual: entry `i` is computed from `(seed, i)` alone, so a page of 100,000 entries
/// costs the same as a page of 230 and nothing but the requested page is ever built.
public enum HistorySource: Sendable {
    case stored([CheerHistoryEntry])
    case generated(count: Int, seed: UInt64, user: String)

    public var count: Int {
        switch self {
        case let .stored(entries): return entries.count
        case let .generated(count, _, _): return count
        }
    }

    public func entry(at index: Int, packs: [AudioPack]) -> CheerHistoryEntry {
        switch self {
        case let .stored(entries): return entries[index]
        case let .generated(_, seed, user):
            return SeedData.generatedEntry(seed: seed, user: user, index: index, packs: packs)
        }
    }
}

public enum SeedData {
    public static let defaultSeed: UInt64 = 20_221_018
    public static let alice = "qa-alice"
    public static let empty = "qa-empty"
    public static let whale = "qa-whale"
    public static let aliceBalance = 1250
    public static let aliceHistoryCount = 230
    public static let whaleBalance = 1_000_000
    public static let defaultWhaleHistory = 100_000
    /// The largest history the stand-in generates (keeps every date and page count far from overflow).
    public static let maxGeneratedHistory = 1_000_000_000

    /// The newest seeded cheer; everything generated lies before it, so data never depends on today's date.
    public static let newest = ISODate.epoch(year: 2026, month: 11, day: 20, hour: 18, minute: 4, second: 11)

    static let handles: [String] = [
        "alice", "bob_the_builder", "chloé", "dmitri", "eun-ji", "fatima", "günther", "hiro", "ivana",
        "jamal", "kofi", "léa", "marta", "nils", "olu", "pedro", "quinn", "rafa", "sven", "tomás",
        "ünal", "雪", "민수", "zoë",
    ]

    static let phrases: [String] = [
        "Love this one!", "Perfect for late-night coding sessions.", "My cat falls asleep to this 🐈",
        "The third track is pure magic ✨", "Used it for a whole exam week, thank you.",
        "Better on headphones.", "Reminds me of home.", "ありがとう！毎晩聴いています。", "¡Qué bonito!",
        "Dankeschön — genau das Richtige.", "10/10 would cheer again", "Could be longer, but lovely.",
        "정말 좋아요 👍", "Replaced my white-noise machine.", "Sounds like the trip we took in 2019.",
        "Cheering for the next volume!", "Très apaisant.", "🔥🔥🔥", "Nice stereo image.",
        "Loops seamlessly, great job.",
    ]

    static let longParagraph =
        "I have been listening to this pack every single night for the past three months, and I want to "
        + "say how much it changed my evenings: the transitions are smooth, nothing jumps out at you when "
        + "you are half asleep, and the loop points are genuinely invisible. I tried a dozen other packs "
        + "before this one and every one of them had a click or a bird that suddenly got too loud. Please "
        + "keep making these. Also, if you ever record the same place in winter, I will cheer for that one "
        + "too — twice. Thank you from a very tired parent of twins."

    static let amounts = [5, 10, 10, 20, 25, 25, 50, 50, 100, 200, 500]

    /// Alice's history, newest first: dates step back from `newest` by 2 h to 5 days.
    public static func aliceHistory(seed: UInt64, packs: [AudioPack]) -> [CheerHistoryEntry] {
        var rng = SeededGenerator(seed: SeededGenerator.mix(seed ^ 0xA11CE))
        var date = newest
        return (0..<aliceHistoryCount).map { i in
            defer { date -= Int64(rng.int(in: 7_200...432_000)) }
            var made = entry(rng: &rng, id: "h-alice-\(String(aliceHistoryCount - i))", date: date, packs: packs)
            if i == findableIndex { made.comments = (made.comments ?? []) + [CheerComment(signature: "Ingrid", body: findableComment)] }
            return made
        }
    }

    /// A comment only one entry of Alice's history has, on her page 3 (of 50 a page): what a find
    /// looks for in the end-to-end tests.
    public static let findableIndex = 120
    public static let findableComment = "The ferryman's whistle at 4:10 is my alarm now."

    /// Entry `index` (0 = newest) of a generated history; entry `i` lies in the 15-minute slot `i`
    /// before `newest`, so the list is newest first whatever its length.
    public static func generatedEntry(seed: UInt64, user: String, index: Int, packs: [AudioPack]) -> CheerHistoryEntry {
        var rng = SeededGenerator.forItem(seed: seed, stream: 0x57A1E, index: UInt64(index))
        let date = newest - Int64(index) * 900 - Int64(rng.int(in: 0...899))
        return entry(rng: &rng, id: "h-\(user)-\(index)", date: date, packs: packs)
    }

    static func entry(rng: inout SeededGenerator, id: String, date: Int64, packs: [AudioPack]) -> CheerHistoryEntry {
        let pack = rng.pick(packs)
        let millis = rng.chance(0.15) ? rng.int(in: 0...999) : nil
        var comments: [CheerComment]?
        if rng.chance(0.08) {
            comments = nil
        } else {
            // Most entries carry 0–5 comments, weighted towards few.
            let count = [0, 0, 1, 1, 1, 2, 2, 3, 4, 5][rng.int(in: 0...9)]
            comments = (0..<count).map { _ in
                let signature: String? = rng.chance(0.06) ? nil : rng.pick(handles)
                let body: String?
                if rng.chance(0.05) {
                    body = nil
                } else if rng.chance(0.04) {
                    body = longParagraph
                } else {
                    body = rng.pick(phrases)
                }
                return CheerComment(signature: signature, body: body)
            }
        }
        return CheerHistoryEntry(
            id: id, creator: pack.creator, amount: rng.pick(amounts), product: pack.identifier,
            date: date, dateMillis: millis, comments: comments
        )
    }
}
