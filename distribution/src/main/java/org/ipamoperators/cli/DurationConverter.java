package org.ipamoperators.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Durations on the command line as {@code 500ms}, {@code 15s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT15S}). */
public final class DurationConverter implements ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      Duration d;
      if (v.startsWith("pt") || v.startsWith("p")) {
        d = Duration.parse(v.toUpperCase(Locale.ROOT));
      } else if (v.endsWith("ms")) {
        d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      } else {
        d = Duration.parse("PT" + v.toUpperCase(Locale.ROOT));
      }
      if (d.isNegative() || d.isZero()) {
        throw new TypeConversionException("'" + value + "' must be longer than zero");
      }
      return d;
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new TypeConversionException("'" + value + "' is not a duration such as 500ms, 15s, 2m or 1h");
    }
  }
}
