/*
  FirmataWatchdog: a ConfigurableFirmata 2.x feature that stops the motors when the host goes silent.

  Stock Firmata keeps every PWM pin at its last value when the host process dies or the cable goes.
  Armed by the host with a timeout and a list of PWM pins, this feature writes 0 to those pins when no
  complete Firmata message has arrived for the timeout, once per silence, and tells the host.

  Protocol (sysex id 0x0E, one of the user-defined ids 0x01-0x0F of the Firmata protocol):
    host  F0 0E 00 F7                               query
    board F0 0E 00 version toLSB toMSB pin... F7    status (timeout 0 = not armed; 7-bit bytes)
    host  F0 0E 01 toLSB toMSB pin... F7            arm with a timeout [ms] (0 disarms) and PWM pins
    board F0 0E 01 version toLSB toMSB pin... F7    the status, as armed
    board F0 0E 02 zeroed silentLSB silentMSB F7    fired: `zeroed` pins were not at 0, after `silent` ms
  A board without the feature answers the query with the string "Unhandled sysex command".

  In the sketch (ConfigurableFirmata.ino, see docs/firmata.md):
    #include "FirmataWatchdog.h"
    FirmataWatchdog watchdog;
    ... in setup():  firmataExt.addFeature(watchdog);
    ... in loop():   replace Firmata.processInput() by watchdog.processInput(), and call
                     watchdog.check() once per pass.

  Part of twolink (firmware-protocol/firmata-watchdog/), MIT licence.
*/
#ifndef FirmataWatchdog_h
#define FirmataWatchdog_h

#include <ConfigurableFirmata.h>
#include <FirmataFeature.h>

#define WATCHDOG_DATA 0x0E
#define WATCHDOG_QUERY 0x00
#define WATCHDOG_ARM 0x01
#define WATCHDOG_FIRED 0x02
#define WATCHDOG_VERSION 1
#define WATCHDOG_MAX_PINS 8

class FirmataWatchdog : public FirmataFeature
{
  public:
    FirmataWatchdog();
    // FirmataFeature
    void handleCapability(byte pin);
    boolean handlePinMode(byte pin, int mode);
    boolean handleSysex(byte command, byte argc, byte *argv);
    void reset();
    /** Firmata.processInput(), and a complete message feeds the watchdog. */
    void processInput();
    /** Once per loop() pass: zeroes the pins when the host has been silent for the timeout. */
    void check();

  private:
    void feed();
    void sendStatus(byte sub);
    unsigned int timeoutMs;     // [ms]; 0 = not armed
    byte pins[WATCHDOG_MAX_PINS];
    byte pinCount;
    unsigned long lastMessageMs; // millis() of the last complete message
    boolean tripped;
};

#endif
