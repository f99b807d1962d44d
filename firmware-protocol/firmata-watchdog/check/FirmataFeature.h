/*
  A STUB for twolink's syntax check: ConfigurableFirmata 2.x's feature interface (FirmataFeature.h).
*/
#ifndef FirmataFeature_h
#define FirmataFeature_h

#include <ConfigurableFirmata.h>

class FirmataFeature
{
  public:
    virtual void handleCapability(byte pin) = 0;
    virtual boolean handlePinMode(byte pin, int mode) = 0;
    virtual boolean handleSysex(byte command, byte argc, byte *argv) = 0;
    virtual void reset() = 0;
};

#endif
