import Foundation

FileHandle.standardError.write(Data("waymarkd: not implemented yet\n".utf8))
exit(70)
