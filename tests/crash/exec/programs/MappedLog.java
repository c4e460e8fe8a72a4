// A JVM program that persists a log through java.nio: a file mapped READ_WRITE, each append a 64-byte record
// at 4096 + 64 i, then the record count at 0, each made durable with MappedByteBuffer.force (which msyncs the
// pages it covers). `bug` leaves the record's force out, so a count can persist before its record.
//
//   java MappedLog append FILE N [bug]
//   java MappedLog check FILE        exit 0 when every counted record is whole
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

public class MappedLog {
  static final int FILE_BYTES = 1 << 20, FIRST_RECORD = 4096, RECORD_BYTES = 64;

  static long word(long record, int k) { return record * 1000 + k; }

  public static void main(String[] args) throws Exception {
    try (RandomAccessFile file = new RandomAccessFile(args[1], "rw")) {
      if (file.length() < FILE_BYTES) file.setLength(FILE_BYTES);
      MappedByteBuffer log = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES);
      if (args[0].equals("append")) {
        final boolean forceRecords = args.length < 4;
        for (int i = 0; i < Integer.parseInt(args[2]); ++i) {
          final int at = FIRST_RECORD + i * RECORD_BYTES;
          for (int k = 0; k < RECORD_BYTES; k += 8) log.putLong(at + k, word(i, k));
          if (forceRecords) log.force(at, RECORD_BYTES);
          log.putLong(0, i + 1);
          log.force(0, 8);
        }
        return;
      }
      final long count = log.getLong(0);
      for (long i = 0; i < count; ++i)
        for (int k = 0; k < RECORD_BYTES; k += 8)
          if (log.getLong(FIRST_RECORD + (int) i * RECORD_BYTES + k) != word(i, k)) {
            System.err.println("record " + i + " of " + count + " is not whole");
            System.exit(1);
          }
    }
  }
}
