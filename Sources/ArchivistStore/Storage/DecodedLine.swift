/// What a thread made of one index line.
enum DecodedLine {
    case blank
    case invalid(String)
    case line(IndexEntry.Line)
}
