// How ConfigurableFirmata.ino uses the feature (docs/firmata.md), for the syntax check.
#include "../FirmataWatchdog.h"

FirmataWatchdog watchdog;

void loopPass()
{
  while (Firmata.available()) watchdog.processInput();
  watchdog.check();
}
