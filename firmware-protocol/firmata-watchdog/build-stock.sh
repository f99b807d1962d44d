#!/usr/bin/env bash
# Builds the stock ConfigurableFirmata example sketch for an Arduino Uno with the edits of docs/firmata.md
# section 1 (the encoder lines uncommented, the features twolink does not use commented out, the blink
# sequence off, and FirmataWatchdog added as step 6 says), against real sources you already have:
#
#   firmware-protocol/firmata-watchdog/build-stock.sh CONFIGURABLE_FIRMATA_DIR ENCODER_DIR FIRMATA_ENCODER_DIR [OUT_DIR]
#
#   CONFIGURABLE_FIRMATA_DIR  ConfigurableFirmata 2.10.x (the folder with src/ and examples/)
#   ENCODER_DIR               Paul Stoffregen's Encoder 1.4.x (Encoder.h, Encoder.cpp, utility/)
#   FIRMATA_ENCODER_DIR       FirmataEncoder 0.1.0 (FirmataEncoder.h, FirmataEncoder.cpp)
#   OUT_DIR                   default /tmp/twolink-stock-firmata
#   CORE=...                  the Arduino AVR core (default: Debian's arduino-core-avr)
#   WATCHDOG=0                the same sketch without FirmataWatchdog (to measure what it costs)
#
# Nothing is downloaded: with no source folders (CI has no internet) it says so and exits 0. It prints
# the flash and RAM use and leaves OUT_DIR/stock_firmata.elf (run it in simavr with
# `fil_harness uno OUT_DIR/stock_firmata.elf` or src/mock/firmware-sim.ts's `elf` option) and .hex.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 3 ]; then
  echo "build-stock.sh: skipped: give the source folders of ConfigurableFirmata 2.10.x, Encoder 1.4.x and FirmataEncoder 0.1.0 (usage at the top of $0); nothing is downloaded" >&2
  exit 0
fi
CF=$(cd "$1" && pwd); ENC=$(cd "$2" && pwd); FENC=$(cd "$3" && pwd)
OUT=${4:-/tmp/twolink-stock-firmata}
CORE=${CORE:-/usr/share/arduino/hardware/arduino/avr}
for f in "$CF/src/ConfigurableFirmata.h" "$CF/examples/ConfigurableFirmata/ConfigurableFirmata.ino" "$ENC/Encoder.h" "$FENC/FirmataEncoder.h" "$CORE/cores/arduino/Arduino.h"; do
  [ -f "$f" ] || { echo "build-stock.sh: missing $f" >&2; exit 2; }
done
grep -q '^version=2\.10\.' "$CF/library.properties" || echo "build-stock.sh: warning: $CF is not ConfigurableFirmata 2.10.x ($(grep '^version=' "$CF/library.properties"))" >&2
command -v avr-g++ >/dev/null || { echo "build-stock.sh: avr-g++ not found: sudo apt-get install gcc-avr avr-libc arduino-core-avr" >&2; exit 2; }

mkdir -p "$OUT/obj"
SKETCH="$OUT/stock_firmata.cpp"
# The docs' edits, applied to the stock example; each must match once, or the example changed.
{
  echo '#include <Arduino.h>'
  sed -e 's#^// \(\#include <Encoder.h>\)#\1#' \
      -e 's#^// \(\#include <FirmataEncoder.h>\)#\1#' \
      -e 's#^// \(FirmataEncoder encoder;\)#\1\n\#include "FirmataWatchdog.h"\nFirmataWatchdog watchdog;#' \
      -E -e 's#^(\#include <(Servo|ServoFirmata|Wire|I2CFirmata|OneWireFirmata|StepperFirmata|AccelStepperFirmata|SerialFirmata|FirmataScheduler)\.h>)#// \1#' \
      -e 's#^((ServoFirmata servo|I2CFirmata i2c|OneWireFirmata oneWire|StepperFirmata stepper|AccelStepperFirmata accelStepper|SerialFirmata serial|FirmataScheduler scheduler);)#// \1#' \
      -e 's#^(  firmataExt.addFeature\(encoder\);)#\1\n  firmataExt.addFeature(watchdog);#' \
      -e 's#^  // (Firmata.disableBlinkVersion\(\);)#  \1#' \
      -e 's#^(    )Firmata.processInput\(\);#\1watchdog.processInput();#' \
      "$CF/examples/ConfigurableFirmata/ConfigurableFirmata.ino"
} > "$SKETCH"
# watchdog.check() as the last line of loop() (the file's last closing brace).
last=$(grep -n '^}' "$SKETCH" | tail -1 | cut -d: -f1)
sed -i "${last}s#^}#  watchdog.check();\n}#" "$SKETCH"
WITH="+ FirmataWatchdog"
if [ "${WATCHDOG:-1}" = 0 ]; then
  sed -i -E -e 's#^(.*(FirmataWatchdog|watchdog[.)]).*)$#// \1#' -e 's#^// (    )watchdog\.processInput\(\);#\1Firmata.processInput();#' "$SKETCH"
  WITH="(no watchdog)"
fi
checks=('^#include <Encoder.h>' '^  Firmata.disableBlinkVersion();' '^// #include <Servo.h>')
[ "${WATCHDOG:-1}" = 0 ] && checks+=('^    Firmata.processInput();') || checks+=('^FirmataWatchdog watchdog;' '^  firmataExt.addFeature(watchdog);' '^    watchdog.processInput();' '^  watchdog.check();')
for want in "${checks[@]}"; do
  [ "$(grep -c -- "$want" "$SKETCH")" = 1 ] || { echo "build-stock.sh: the stock example did not take the edit '$want' once: $SKETCH" >&2; exit 2; }
done

MCU=atmega328p
FLAGS=(-mmcu=$MCU -DF_CPU=16000000L -DARDUINO=10819 -DARDUINO_AVR_UNO -DARDUINO_ARCH_AVR -Os -g -w
       -ffunction-sections -fdata-sections -DDECIMAL_DIG=__DECIMAL_DIG__
       -I"$CORE/cores/arduino" -I"$CORE/variants/standard" -I"$CF/src" -I"$ENC" -I"$FENC" -I"$HERE")
CXXFLAGS=(-std=gnu++11 -fno-exceptions -fno-threadsafe-statics -fpermissive)
objs=()
build() { # source file, object name
  local o="$OUT/obj/$2.o"
  case "$1" in
    *.c) avr-gcc "${FLAGS[@]}" -std=gnu11 -c "$1" -o "$o" ;;
    *.S) avr-gcc "${FLAGS[@]}" -x assembler-with-cpp -c "$1" -o "$o" ;;
    *) avr-g++ "${FLAGS[@]}" "${CXXFLAGS[@]}" -c "$1" -o "$o" ;;
  esac
  objs+=("$o")
}
for f in "$CORE"/cores/arduino/*.c "$CORE"/cores/arduino/*.cpp "$CORE"/cores/arduino/*.S; do
  [ -f "$f" ] && build "$f" "core_$(basename "$f")"
done
for f in ConfigurableFirmata FirmataExt FirmataReporting DigitalInputFirmata DigitalOutputFirmata AnalogFirmata AnalogInputFirmata AnalogOutputFirmata; do
  [ -f "$CF/src/$f.cpp" ] && build "$CF/src/$f.cpp" "cf_$f"
done
build "$ENC/Encoder.cpp" enc_Encoder
build "$FENC/FirmataEncoder.cpp" fenc_FirmataEncoder
[ "${WATCHDOG:-1}" = 0 ] || build "$HERE/FirmataWatchdog.cpp" FirmataWatchdog
build "$SKETCH" sketch
avr-gcc -mmcu=$MCU -Os -Wl,--gc-sections -o "$OUT/stock_firmata.elf" "${objs[@]}" -lm
avr-objcopy -O ihex -R .eeprom "$OUT/stock_firmata.elf" "$OUT/stock_firmata.hex"
read -r text data bss _ < <(avr-size -A "$OUT/stock_firmata.elf" | awk '/^\.text/{t=$2} /^\.data/{d=$2} /^\.bss/{b=$2} END{print t, d, b}')
echo "SIZE stock ConfigurableFirmata $(grep '^version=' "$CF/library.properties" | cut -d= -f2) + FirmataEncoder + Encoder $WITH (uno): flash $((text + data)) of 32256 bytes, RAM $((data + bss)) of 2048 bytes (static)"
echo "ELF $OUT/stock_firmata.elf"
