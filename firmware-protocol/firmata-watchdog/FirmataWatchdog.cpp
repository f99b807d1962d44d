/*
  FirmataWatchdog.cpp: see FirmataWatchdog.h. twolink, MIT licence.
*/
#include "FirmataWatchdog.h"

FirmataWatchdog::FirmataWatchdog()
{
  reset();
}

void FirmataWatchdog::handleCapability(byte pin)
{
  // no pin mode of its own
}

boolean FirmataWatchdog::handlePinMode(byte pin, int mode)
{
  return false;
}

void FirmataWatchdog::reset()
{
  timeoutMs = 0;
  pinCount = 0;
  tripped = false;
  lastMessageMs = millis();
}

void FirmataWatchdog::feed()
{
  lastMessageMs = millis();
  tripped = false;
}

void FirmataWatchdog::processInput()
{
  Firmata.processInput();
  if (!Firmata.isParsingMessage()) feed();
}

void FirmataWatchdog::sendStatus(byte sub)
{
  Firmata.write(START_SYSEX);
  Firmata.write(WATCHDOG_DATA);
  Firmata.write(sub);
  Firmata.write(WATCHDOG_VERSION);
  Firmata.write(timeoutMs & 0x7F);
  Firmata.write((timeoutMs >> 7) & 0x7F);
  for (byte i = 0; i < pinCount; i++) Firmata.write(pins[i] & 0x7F);
  Firmata.write(END_SYSEX);
}

boolean FirmataWatchdog::handleSysex(byte command, byte argc, byte *argv)
{
  if (command != WATCHDOG_DATA || argc < 1) return false;
  if (argv[0] == WATCHDOG_QUERY) {
    sendStatus(WATCHDOG_QUERY);
    return true;
  }
  if (argv[0] == WATCHDOG_ARM && argc >= 3) {
    timeoutMs = (unsigned int)(argv[1] & 0x7F) | ((unsigned int)(argv[2] & 0x7F) << 7);
    pinCount = 0;
    for (byte i = 3; i < argc && pinCount < WATCHDOG_MAX_PINS; i++) {
      byte pin = argv[i] & 0x7F;
      if (IS_PIN_PWM(pin)) pins[pinCount++] = pin;
    }
    feed();
    sendStatus(WATCHDOG_ARM);
    return true;
  }
  return false;
}

void FirmataWatchdog::check()
{
  if (timeoutMs == 0 || tripped) return;
  unsigned long silent = millis() - lastMessageMs; // unsigned: right across the millis() wrap
  if (silent <= timeoutMs) return;
  tripped = true;
  byte zeroed = 0;
  for (byte i = 0; i < pinCount; i++) {
    byte pin = pins[i];
    if (Firmata.getPinMode(pin) != PIN_MODE_PWM) continue;
    if (Firmata.getPinState(pin) != 0) zeroed++;
    analogWrite(PIN_TO_PWM(pin), 0);
    Firmata.setPinState(pin, 0);
  }
  if (silent > 16383) silent = 16383;
  Firmata.write(START_SYSEX);
  Firmata.write(WATCHDOG_DATA);
  Firmata.write(WATCHDOG_FIRED);
  Firmata.write(zeroed & 0x7F);
  Firmata.write(silent & 0x7F);
  Firmata.write((silent >> 7) & 0x7F);
  Firmata.write(END_SYSEX);
}
