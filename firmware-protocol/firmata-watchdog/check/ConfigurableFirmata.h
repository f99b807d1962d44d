/*
  A STUB, written for twolink's syntax check only: the declarations of ConfigurableFirmata 2.x
  (Firmata.h / ConfigurableFirmata.h and utility/Boards.h) that FirmataWatchdog uses, so that the
  feature compiles with avr-g++ where the library is not installed (it is neither on npm nor in
  Debian). Build the real sketch against the real library (docs/firmata.md).
*/
#ifndef ConfigurableFirmata_h
#define ConfigurableFirmata_h

#include <Arduino.h>

#define START_SYSEX 0xF0
#define END_SYSEX 0xF7
#define PIN_MODE_PWM 0x03

// utility/Boards.h, for the ATmega328P and the ATmega2560: PWM pins are the Arduino pins with PWM
#define IS_PIN_PWM(p) digitalPinHasPWM(p)
#define PIN_TO_PWM(p) (p)

class FirmataClass
{
  public:
    int available(void);
    void processInput(void);
    boolean isParsingMessage(void);
    void write(byte c);
    void sendString(const char *string);
    byte getPinMode(byte pin);
    void setPinMode(byte pin, byte config);
    int getPinState(byte pin);
    void setPinState(byte pin, int state);
};

extern FirmataClass Firmata;

#endif
