public enum ShellPlaceholder {}
