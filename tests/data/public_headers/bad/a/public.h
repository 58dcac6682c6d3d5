// An installed header of layer a (a fixture for scripts/check_public_headers.py).
#pragma once

#include <string>

#include "a/also_public.h"
#include "a/internal.h"
#include <b/detail.h>
