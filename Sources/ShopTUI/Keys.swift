import ShopViewModels

/// What the terminal reports: a key press, or that its size changed. Keys become messages through
/// the keymap (`Keymap.message(for:in:)`); the keymap and the actions live in the view-model layer.
public enum TerminalInput: Sendable, Equatable {
    case key(KeyPress)
    case resize
    case mouse(x: Int, y: Int, MouseButton)
}

public enum MouseButton: Sendable, Equatable {
    case press, wheelUp, wheelDown
}
