import Testing
@testable import ShopViewModels

/// The help overlay, the pack filter and a prompt are one value (`ScreenState.Focus`): opening one
/// closes the others, and the mode follows from it.
@Suite struct FocusTests {
    @Test func oneFocusAtATime() {
        var screen = ScreenState()
        #expect(screen.focus == .browse)
        screen.editingFilter = true
        screen.prompt = PromptState(kind: .find)
        #expect(!screen.editingFilter && screen.prompt?.kind == .find && screen.focus == .prompt(PromptState(kind: .find)))
        screen.showHelp = false  // closing what is not open changes nothing
        #expect(screen.prompt != nil)
        screen.showHelp = true
        #expect(screen.prompt == nil && screen.showHelp)
        screen.prompt = nil
        #expect(screen.showHelp)
    }

    @Test func theModeFollowsTheFocus() {
        var state = AppState(context: ShopContext(environment: "local", baseURL: "http://127.0.0.1:8080", user: "qa-alice"))
        for (focus, mode) in [(ScreenState.Focus.browse, Mode.browse), (.help, .help), (.filter, .filter), (.prompt(PromptState(kind: .goTo)), .prompt)] {
            state.screen.focus = focus
            #expect(state.mode == mode)
        }
    }
}
