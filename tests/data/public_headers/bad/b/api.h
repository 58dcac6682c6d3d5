// Layer b's only installed header.
#pragma once
