/// The palettes: how each semantic `Color` of a grid looks on a terminal. A grid never names a
/// terminal colour; the backend asks the theme. Four palettes: for dark and light backgrounds, each
/// also in a colour-blind-safe variant (blue against orange instead of green against red, after
/// Okabe and Ito). Meaning never rests on colour alone: every coloured state also has a glyph or a
/// word (docs/themes.md lists them), so NO_COLOR and a monochrome terminal lose nothing.
public struct Theme: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Background: String, Sendable, Equatable, Hashable, CaseIterable {
        case dark, light
    }

    public var background: Background
    public var colorBlindSafe: Bool

    public init(_ background: Background, colorBlindSafe: Bool = false) {
        self.background = background
        self.colorBlindSafe = colorBlindSafe
    }

    public static let dark = Theme(.dark)
    public static let light = Theme(.light)
    public static let all: [Theme] = [Theme(.dark), Theme(.dark, colorBlindSafe: true), Theme(.light), Theme(.light, colorBlindSafe: true)]

    /// "dark", "light-colorblind", …: the names `theme =` and `--theme` take (besides "auto").
    public var description: String { background.rawValue + (colorBlindSafe ? "-colorblind" : "") }

    /// A terminal colour: an index into the 256-colour table, and the one of the 8 basic colours used
    /// when the terminal has fewer (nil: the terminal's own foreground).
    public struct Ink: Sendable, Equatable, Hashable {
        public var index256: Int16
        public var index8: Int16?
    }

    /// What a cell's style becomes on the terminal.
    public struct Look: Sendable, Equatable, Hashable {
        public var ink: Ink?
        public var bold = false
        public var dim = false
        public var reverse = false
        public var underline = false
    }

    public func ink(_ color: Color) -> Ink {
        switch (background, colorBlindSafe, color) {
        // Dark: the terminal's own basic colours (tuned to its background), as before themes existed;
        // muted text grey where there are 256 colours (blue and dim on 8).
        case (.dark, false, .accent): Ink(index256: 6, index8: 6)
        case (.dark, false, .good): Ink(index256: 2, index8: 2)
        case (.dark, false, .warning): Ink(index256: 3, index8: 3)
        case (.dark, false, .danger): Ink(index256: 1, index8: 1)
        case (.dark, false, .muted): Ink(index256: 245, index8: 4)  // #8a8a8a; blue and dim with 8 colours
        // Dark, colour-blind safe: sky blue for good, salmon red for danger, yellow for warnings.
        case (.dark, true, .accent): Ink(index256: 182, index8: 7)  // #d7afd7, a reddish purple
        case (.dark, true, .good): Ink(index256: 75, index8: 6)  // #5fafff
        case (.dark, true, .warning): Ink(index256: 220, index8: 3)  // #ffd700
        case (.dark, true, .danger): Ink(index256: 203, index8: 5)  // #ff5f5f
        case (.dark, true, .muted): Ink(index256: 246, index8: 4)  // #949494
        // Light: darker inks that keep at least 4.5:1 against white (WCAG AA), grey for muted text.
        case (.light, false, .accent): Ink(index256: 25, index8: 4)  // #005faf
        case (.light, false, .good): Ink(index256: 28, index8: 2)  // #008700
        case (.light, false, .warning): Ink(index256: 130, index8: 5)  // #af5f00 (yellow on white is unreadable)
        case (.light, false, .danger): Ink(index256: 160, index8: 1)  // #d70000
        case (.light, false, .muted): Ink(index256: 241, index8: nil)  // #626262
        // Light, colour-blind safe: blue against raspberry red and amber, purple accents.
        case (.light, true, .accent): Ink(index256: 90, index8: nil)  // #870087
        case (.light, true, .good): Ink(index256: 25, index8: 4)  // #005faf
        case (.light, true, .warning): Ink(index256: 94, index8: 5)  // #875f00
        case (.light, true, .danger): Ink(index256: 161, index8: 1)  // #d7005f
        case (.light, true, .muted): Ink(index256: 241, index8: nil)
        }
    }

    /// A style as the terminal shows it. With 256 colours muted text is a grey that keeps 4.5:1
    /// against the background, so it is not dimmed as well (dim grey is faint on many terminals); with
    /// 8 colours, which have no grey, it stays dim.
    public func look(_ style: Style, colors: Int) -> Look {
        let ink = style.foreground.map(ink)
        let dim = style.dim && (colors < 256 || style.foreground != .muted)
        return Look(ink: ink, bold: style.bold, dim: dim, reverse: style.reverse, underline: style.underline)
    }

    /// The look without colour (NO_COLOR, or a terminal without colours): warnings, errors and accents
    /// become bold; everything they mean is in their glyphs and words.
    public static func monochrome(_ style: Style) -> Look {
        let emphasis = style.foreground == .danger || style.foreground == .warning || style.foreground == .accent
        return Look(ink: nil, bold: style.bold || emphasis, dim: style.dim, reverse: style.reverse, underline: style.underline)
    }
}

/// What the user asked for: a palette, or `auto` (the terminal's background, asked with OSC 11).
public enum ThemeRequest: Sendable, Equatable {
    case fixed(Theme)
    case auto(colorBlindSafe: Bool)

    public static let standard = ThemeRequest.auto(colorBlindSafe: false)
}
