public enum TSPlaceholder {}
