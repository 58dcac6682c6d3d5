// Installed, so including it is fine.
#pragma once
