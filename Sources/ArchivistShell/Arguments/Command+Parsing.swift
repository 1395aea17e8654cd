extension Command {
    /// Splits arguments into options and positionals, checking them against this command's
    /// declared options and arity.
    public func parse(_ arguments: [String]) throws(ShellError) -> ParsedArguments {
        try parse(words: arguments.map { ShellWord($0, quoting: .unknown) })
    }

    /// Parses words that remember their quotes (a line typed or read from a script): a word in
    /// quotes is never an option.
    public func parse(words arguments: [ShellWord]) throws(ShellError) -> ParsedArguments {
        var parsed = ParsedArguments(command: name)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let word = arguments[index]
            let argument = word.text
            index += 1
            let quoted = word.quoting == .single || word.quoting == .double
            if optionsEnded || quoted || !argument.hasPrefix("--") || argument == "-" {
                parsed.positionalWords.append(word)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (name, inlineValue) = Shell.split(argument)
            guard let option = options.first(where: { $0.name == name }) else {
                throw .usage("\(self.name): unknown option '\(name)'; usage: \(usage)", command: self.name)
            }
            if let valueName = option.valueName {
                if let inlineValue {
                    parsed.valueWords[name, default: []].append(ShellWord(inlineValue, quoting: word.quoting))
                } else if index < arguments.count {
                    parsed.valueWords[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    throw .usage("\(self.name): option '\(name)' needs a value (\(valueName))", command: self.name)
                }
            } else {
                if inlineValue != nil {
                    throw .usage("\(self.name): option '\(name)' takes no value", command: self.name)
                }
                parsed.flags.insert(name)
            }
        }
        if parsed.positionalWords.count < arity.lowerBound {
            throw .usage("\(self.name): missing arguments; usage: \(usage)", command: self.name)
        }
        if parsed.positionalWords.count > arity.upperBound {
            throw .usage("\(self.name): too many arguments; usage: \(usage)", command: self.name)
        }
        return parsed
    }
}
