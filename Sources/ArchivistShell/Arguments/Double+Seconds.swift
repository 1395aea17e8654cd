extension Double {
    /// A number of seconds as an option or an environment variable gives it: a finite number, 0
    /// or more (`1`, `0.5`, `2e1`); nil for anything else.
    init?(seconds text: String) {
        guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
        self = value
    }
}
