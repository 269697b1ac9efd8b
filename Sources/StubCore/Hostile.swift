/// Text a hostile or broken server could send: everything a terminal client must neutralise.
public enum HostileText {
    public static let samples: [String] = [
        "\u{1B}[31;1mRED ALERT\u{1B}[0m",                       // ANSI SGR colours
        "\u{1B}[2J\u{1B}[Hscreen cleared",                        // CSI clear screen + home
        "\u{1B}]0;pwned window title\u{07}",                      // OSC 0 title, BEL-terminated
        "\u{1B}]52;c;cm0gLXJmIH4=\u{1B}\\clipboard",              // OSC 52 clipboard write, ST-terminated
        "\u{1B}]8;;https://example.invalid/\u{1B}\\link\u{1B}]8;;\u{1B}\\", // OSC 8 hyperlink
        "\u{9B}31mC1 CSI red\u{9B}0m",                            // C1 CSI
        "next\u{85}line \u{90}DCS\u{9C} C1 controls",             // NEL, DCS, ST as C1
        "\u{202E}gnp.exe\u{202C} bidi override",                  // RLO … PDF
        "\u{2066}isolate\u{2069}\u{200F}rtl mark",                // LRI … PDI, RLM
        "zero\u{200B}width\u{200D}joiner\u{FEFF}bom\u{2060}wj",   // zero-width and format characters
        "Z\u{0335}\u{0321}\u{034E}a\u{0336}l\u{0338}g\u{0334}o\u{0337}", // combining marks (zalgo)
        "e\u{0301}\u{0301}\u{0301}\u{0301}\u{0301}\u{0301}\u{0301}\u{0301} stacked", // stacked combining
        String(repeating: "Supercalifragilistic", count: 20),      // 400-character unbroken word
        "tab\there\rCR\u{08}\u{08}BS\u{7F}DEL\u{07}BEL\u{00}NUL",  // C0 controls and DEL
        "全角文字とＦＵＬＬＷＩＤＴＨ",                                  // East Asian wide
        "👩‍👩‍👧‍👦🇯🇵❤️👍🏽 emoji",                                   // ZWJ sequence, flag, VS16, skin tone
        "\u{1B}[6n\u{1B}[c device queries",                      // DSR / DA: the terminal would answer on stdin
        "\u{1B}P+q544e\u{1B}\\ DCS query",                        // DCS XTGETTCAP
    ]

    static func sample(_ i: Int) -> String { samples[i % samples.count] }

    public static func apply(to packs: [AudioPack]) -> [AudioPack] {
        packs.enumerated().map { i, pack in
            var p = pack
            p.name = sample(i) + " " + pack.name
            p.creator = sample(i + 5) + " " + pack.creator
            p.description = sample(i + 11) + " " + pack.description
            return p
        }
    }

    public static func apply(to page: HistoryPage) -> HistoryPage {
        var page = page
        page.entries = page.entries.enumerated().map { i, entry in
            var e = entry
            e.creator = sample(i) + " " + entry.creator
            var comments = (entry.comments ?? []).enumerated().map { j, c in
                CheerComment(signature: c.signature.map { sample(i + j + 3) + $0 }, body: c.body.map { sample(i + j + 7) + " " + $0 })
            }
            comments.append(CheerComment(signature: sample(i + 1), body: sample(i + 2) + " " + sample(i + 12)))
            e.comments = comments
            return e
        }
        return page
    }

    /// What `malformed_entry` puts in a page: every required field present but of the wrong type or unreadable.
    public struct MalformedEntry: Sendable, Equatable, Encodable {
        public let id: String

        public init(id: String) { self.id = id }

        enum CodingKeys: String, CodingKey { case id, creator, amount, product, date, comments }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(42, forKey: .creator)
            try c.encode("lots", forKey: .amount)
            try c.encodeNil(forKey: .product)
            try c.encode("yesterday at noon", forKey: .date)
            try c.encode("none", forKey: .comments)
        }
    }

    /// The page with entry `index` (clamped to the page) malformed; `nil` for an empty page (nothing to break).
    public static func malform(_ page: HistoryPage, index: Int?) -> HistoryPage? {
        guard !page.entries.isEmpty else { return nil }
        var page = page
        page.malformedIndex = min(index ?? page.entries.count / 2, page.entries.count - 1)
        return page
    }
}
